import '#shared/aws/node-version.ts';
import { Agent } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '#shared/config.ts';
import { TABLES } from '#shared/definitions/tables.ts';

// Local endpoints are plain HTTP: keep connections alive there too (the SDK does so for HTTPS).
export const requestHandler = { httpAgent: new Agent({ keepAlive: true, maxSockets: 64 }) };

/** The DynamoDB document client of this process, created once at cold start. */
export const dynamo = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: config.region, endpoint: config.dynamoEndpoint, requestHandler }),
  { marshallOptions: { removeUndefinedValues: true } },
);

/** The physical name of a table of `shared/definitions/tables.ts`. */
export function tableName(table: keyof typeof TABLES): string {
  return config.tablePrefix + TABLES[table].name;
}
