import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { type Bank, findBank } from '#shared/banks/index.ts';
import { isValidNuban } from '#shared/banks/nuban.ts';
import { config } from '#shared/config.ts';
import { InvalidAccountNumber, UnknownBank } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import { partner } from '#shared/partners/registry.ts';

/** A bank account whose holder's name the partner bank confirmed. */
export interface ResolvedAccount {
  account_name: string;
  account_number: string;
  bank: Bank;
}

async function cachedName(key: string, now: number): Promise<string | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: tableName('nameEnquiries'), Key: { account_key: key } }),
  );
  if (!Item || Number(Item.cached_until) <= now) return undefined;
  return String(Item.account_name);
}

async function rememberName(key: string, accountName: string, now: number): Promise<void> {
  const until = now + config.nameEnquiryCacheSeconds * 1000;
  await dynamo.send(
    new PutCommand({
      TableName: tableName('nameEnquiries'),
      Item: {
        account_key: key,
        account_name: accountName,
        cached_until: until,
        ttl: Math.ceil(until / 1000),
      },
    }),
  );
}

/** The key of an account's cached name enquiry: bank code and account number. */
export function nameEnquiryKey(bankCode: string, accountNumber: string): string {
  return `${bankCode}:${accountNumber}`;
}

/**
 * Confirms a bank account: the bank must be listed, a NUBAN's check digit must be right (checked
 * before any partner call), the partner must be able to pay the bank, and the name comes from the
 * partner's name enquiry, cached per account for NAME_ENQUIRY_CACHE_SECONDS.
 */
export async function resolveAccount(bankCode: string, accountNumber: string): Promise<ResolvedAccount> {
  const bank = findBank(bankCode);
  if (!bank) throw new UnknownBank();
  if (bank.nuban && !isValidNuban(bank.code, accountNumber)) throw new InvalidAccountNumber();
  await partner().checkBank(bank.code);
  const key = nameEnquiryKey(bank.code, accountNumber);
  const now = Date.now();
  let accountName = config.nameEnquiryCacheSeconds > 0 ? await cachedName(key, now) : undefined;
  if (accountName === undefined) {
    accountName = await partner().nameEnquiry(bank.code, accountNumber);
    if (config.nameEnquiryCacheSeconds > 0) {
      await rememberName(key, accountName, now).catch((error: unknown) =>
        logger.warn('could not cache name enquiry', { error: String(error) }),
      );
    }
  }
  return {
    account_name: accountName,
    account_number: accountNumber,
    bank: { code: bank.code, name: bank.name },
  };
}
