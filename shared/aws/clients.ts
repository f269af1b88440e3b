import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requestHandler } from '#shared/aws/request-handler.ts';
import { config } from '#shared/config.ts';
import { TABLES } from '#shared/definitions/tables.ts';

/** The DynamoDB document client of this process, created once at cold start. */
export const dynamo = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: config.region,
    endpoint: config.dynamoEndpoint,
    requestHandler: requestHandler(),
  }),
  { marshallOptions: { removeUndefinedValues: true } },
);

/** The physical name of a table of `shared/definitions/tables.ts`. */
export function tableName(table: keyof typeof TABLES): string {
  return config.tablePrefix + TABLES[table].name;
}
