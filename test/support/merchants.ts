import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { nameEnquiryKey } from '#shared/accounts/resolve.ts';
import { createApiKey } from '#shared/api-keys/store.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { toNuban } from '#shared/banks/nuban.ts';
import { config } from '#shared/config.ts';
import { type KeyOptions, onboardMerchant } from '#shared/merchants/onboard.ts';

/** A merchant with a fresh key pair, and the headers that authenticate as it. */
export async function aMerchant(keyOptions: KeyOptions = {}) {
  const { merchant, key, apiSecret } = await onboardMerchant(
    `Test Merchant ${Math.random().toString(36).slice(2, 8)}`,
    keyOptions,
  );
  return {
    merchant,
    apiKey: key.api_key,
    apiSecret,
    headers: { 'X-API-Key': key.api_key, 'X-API-Secret': apiSecret },
  };
}

/** Another key pair for an existing merchant. */
export async function anotherKey(merchantId: string, keyOptions: KeyOptions = {}) {
  const { record, apiSecret } = await createApiKey(merchantId, keyOptions);
  return {
    apiKey: record.api_key,
    apiSecret,
    headers: { 'X-API-Key': record.api_key, 'X-API-Secret': apiSecret },
  };
}

/**
 * A NUBAN-valid account number at `bankCode` whose serial starts with `prefix` (a sandbox trigger
 * such as 99999, or digits of your own) and is unique to this call. By default a plain account:
 * no trigger of the sandbox or of the Paystack stand-in (`11111`, `10101`…) starts with `12`.
 */
export function anAccount(bankCode = '058', prefix = '12'): string {
  const rest = 9 - prefix.length;
  const serial = prefix + String(Math.floor(Math.random() * 10 ** rest)).padStart(rest, '0');
  return toNuban(bankCode, serial);
}

/** Accounts `anAccountNeverEnquired` has handed out in this process. */
const handedOut = new Set<string>();

/**
 * `anAccount`, but one whose name no test has enquired yet (no cached name enquiry, none handed out
 * here): for tests that count the DynamoDB commands of a name enquiry. A short prefix leaves few
 * numbers (`77777`: 10,000), so two draws of a run can meet, and the second finds the name cached.
 */
export async function anAccountNeverEnquired(bankCode: string, prefix: string): Promise<string> {
  for (;;) {
    const account = anAccount(bankCode, prefix);
    if (handedOut.has(account)) continue;
    handedOut.add(account);
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName('nameEnquiries'),
        Key: { account_key: nameEnquiryKey(bankCode, account) },
      }),
    );
    if (!Item) return account;
  }
}

/** How many name enquiries the sandbox partner received for an account number. */
export async function nameEnquiriesFor(accountNumber: string): Promise<number> {
  const response = await fetch(new URL('/v1/_calls', config.partner.baseUrl));
  const { name_enquiries: counts } = (await response.json()) as { name_enquiries: Record<string, number> };
  return counts[accountNumber] ?? 0;
}

/**
 * Puts money in a merchant's wallet through the ledger, as a payment would (Money in will credit
 * through the same call); returns the entry id.
 */
export async function fund(merchantId: string, amount: number): Promise<string> {
  const { credit } = await import('#shared/ledger/ledger.ts');
  const entryId = `payment:test-${randomUUID()}`;
  await credit({ entryId, merchantId, amount, category: 'payment', reference: entryId });
  return entryId;
}

/**
 * A transfer that is debited and pending: the same ledger posting and record `createTransfer` makes.
 * By default it was handed to the partner, which answered pending (a send counted, resends held for
 * an hour), so neither a retry nor the requery (every second in the tests) sends it again while a
 * test settles it; `handedOver: false` leaves it as a crash between the debit and the send does,
 * which a retry or the requery sends.
 */
export async function aPendingTransfer(
  merchantId: string,
  reference: string,
  amount: number,
  {
    fee = 1_000,
    counterparty = { account_name: 'PENDING PAYEE', account_number: '0000014579', bank_code: '011' },
    through,
    handedOver = true,
    account,
  }: {
    fee?: number;
    counterparty?: { account_name: string; account_number: string; bank_code: string };
    /** The partner it was sent through: the configured one unless given (a deployment that switched). */
    through?: 'sandbox' | 'paystack';
    handedOver?: boolean;
    /**
     * The partner account it was handed over through (`BankingPartner.accountTag`): the configured
     * one unless given (Paystack's secret key changed since).
     */
    account?: string;
  } = {},
) {
  const { debit } = await import('#shared/ledger/ledger.ts');
  const { putTransactionItem, transactionRecord } = await import('#shared/transactions/store.ts');
  const { transferEntryId } = await import('#shared/transfers/transfers.ts');
  const { transferReferenceItem } = await import('#shared/transfers/references.ts');
  const { partner } = await import('#shared/partners/registry.ts');
  const bank = { name: through ?? partner().name, transferReference: partner().transferReference };
  const partnerReference = bank.transferReference(merchantId, reference);
  await debit({
    entryId: transferEntryId(merchantId, reference),
    merchantId,
    amount: amount + fee,
    category: 'transfer',
    reference,
    companions: (entry) => [
      putTransactionItem(
        transactionRecord(entry, {
          reference,
          amount,
          fee,
          status: 'pending',
          narration: null,
          counterparty,
          partner: bank.name,
          partner_reference: partnerReference,
          pending_partner: bank.name,
        }),
      ),
      transferReferenceItem(bank.name, partnerReference, { merchant_id: merchantId, reference }),
    ],
  });
  if (handedOver) {
    const { recordDispatch, holdResends } = await import('#shared/transactions/store.ts');
    await recordDispatch(merchantId, reference, { account: account ?? (await partner().accountTag?.()) });
    await holdResends(merchantId, reference, Date.now() + 3600_000);
  }
}

/**
 * A merchant funded with 20,000 kobo and a pending transfer of 5,000 (fee 1,000) named
 * `<prefix>-<random>`, handed over and held from resends (`aPendingTransfer`): its record as stored.
 */
export async function aFundedPendingTransfer(prefix: string) {
  const { merchant } = await aMerchant();
  await fund(merchant.merchant_id, 20_000);
  const reference = `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
  await aPendingTransfer(merchant.merchant_id, reference, 5_000);
  const { getTransaction } = await import('#shared/transactions/store.ts');
  const transfer = await getTransaction(merchant.merchant_id, reference);
  if (!transfer) throw new Error('no pending transfer');
  return { merchantId: merchant.merchant_id, transfer };
}
