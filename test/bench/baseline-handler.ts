/**
 * The cold-start baseline of `npm run bench`: the smallest useful DynamoDB Lambda, bundled and
 * imported exactly as the service's functions are. It reads its table from the environment itself
 * on purpose: it stands for "the AWS SDK and nothing else".
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

const client = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: process.env.AWS_REGION, endpoint: process.env.DYNAMODB_ENDPOINT }),
);
const table = `${process.env.TABLE_PREFIX ?? ''}merchants`;

export const handler = async (event: { merchantId: string }) => {
  const { Item } = await client.send(
    new GetCommand({ TableName: table, Key: { merchant_id: event.merchantId } }),
  );
  return Item;
};
