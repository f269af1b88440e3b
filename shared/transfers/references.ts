import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import type { PartnerName } from '#shared/partners/partner.ts';

/** Which merchant's transfer a partner's transfer reference names. */
export interface TransferOwner {
  merchant_id: string;
  reference: string;
}

function key(partner: PartnerName, partnerReference: string): string {
  return `${partner}:${partnerReference}`;
}

/** A companion write of a transfer's debit: its partner reference, claimed for it alone. */
export function transferReferenceItem(partner: PartnerName, partnerReference: string, owner: TransferOwner) {
  return {
    Put: {
      TableName: tableName('transferReferences'),
      Item: { partner_reference: key(partner, partnerReference), ...owner },
      ConditionExpression: 'attribute_not_exists(partner_reference)',
    },
  };
}

/** The transfer a partner's reference names, or undefined if it is not one of ours. */
export async function transferOwner(
  partner: PartnerName,
  partnerReference: string,
): Promise<TransferOwner | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName('transferReferences'),
      Key: { partner_reference: key(partner, partnerReference) },
      ConsistentRead: true,
    }),
  );
  return Item ? { merchant_id: String(Item.merchant_id), reference: String(Item.reference) } : undefined;
}
