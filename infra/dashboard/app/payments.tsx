import { useState } from 'preact/hooks';
import { query, request } from './api.ts';
import { naira, when } from './format.ts';
import type { VirtualAccount } from './types.ts';
import { Alert, emptyText, Pager, Table, useCursors, useFocusOnMount, useLoad } from './ui.tsx';

/** Virtual accounts, newest first, and the payments into the one chosen. */
export function Payments() {
  const paging = useCursors();
  const { cursor } = paging;
  const page = useLoad(
    () => request<VirtualAccount[]>('GET', `/virtual-accounts${query({ limit: 20, cursor })}`),
    [cursor],
  );
  const [open, setOpen] = useState<string>();
  return (
    <>
      <h1>Payments</h1>
      <Alert text={page.error} />
      <Table
        caption="Virtual accounts, newest first"
        rows={page.data?.data ?? []}
        rowKey={(account) => account.reference}
        empty={emptyText(page, 'No virtual accounts yet.', page.data?.nextCursor)}
        columns={[
          { label: 'Created', cell: (account) => when(account.created_at) },
          { label: 'Reference', cell: (account) => <code>{account.reference}</code> },
          { label: 'Account', cell: (account) => <code>{account.account_number}</code> },
          { label: 'Status', cell: (account) => account.status },
          { label: 'Amount', numeric: true, cell: (account) => naira(account.amount) },
          { label: 'Received', numeric: true, cell: (account) => naira(account.amount_received) },
          { label: 'Expires', cell: (account) => when(account.expires_at) },
          {
            label: 'Payments',
            cell: (account) => (
              <button
                type="button"
                class="secondary"
                aria-expanded={open === account.reference}
                aria-controls="payments-into-panel"
                onClick={() => setOpen(open === account.reference ? undefined : account.reference)}
              >
                {open === account.reference ? 'Hide payments' : 'Show payments'}
                {/* Each row's button told apart by name, as a screen reader's list of buttons reads it. */}
                <span class="visually-hidden"> into {account.reference}</span>
              </button>
            ),
          },
        ]}
      />
      <Pager paging={paging} next={page.data?.nextCursor} />
      {open && <PaymentsInto key={open} reference={open} />}
    </>
  );
}

function PaymentsInto({ reference }: { reference: string }) {
  const detail = useLoad(
    () =>
      request<VirtualAccount>('GET', `/payments/${encodeURIComponent(reference)}`).then((page) => page.data),
    [reference],
  );
  // Opened by a button far above it (after the whole list): focus comes to it.
  const heading = useFocusOnMount<HTMLHeadingElement>();
  return (
    <section class="panel" id="payments-into-panel" aria-labelledby="payments-into">
      <h2 id="payments-into" ref={heading}>
        Payments into <code>{reference}</code>
      </h2>
      <Alert text={detail.error} />
      <Table
        caption={`Each payment into ${reference}`}
        rows={detail.data?.payments ?? []}
        rowKey={(payment) => payment.session_id}
        empty={emptyText(detail, 'No payment yet.')}
        columns={[
          { label: 'Received', cell: (payment) => when(payment.received_at) },
          { label: 'Session', cell: (payment) => <code>{payment.session_id}</code> },
          {
            label: 'Sender',
            cell: (payment) => `${payment.sender_name ?? '—'} ${payment.sender_account_number ?? ''}`,
          },
          { label: 'Amount', numeric: true, cell: (payment) => naira(payment.amount) },
        ]}
      />
    </section>
  );
}
