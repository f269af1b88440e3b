import {
  type APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  GetApiKeysCommand,
  UpdateApiKeyCommand,
} from '@aws-sdk/client-api-gateway';
import type { KeyRegistry } from '#shared/api-keys/lifecycle.ts';

/**
 * The stage's API Gateway side of a key: the authorizer hands API Gateway the verified key (key
 * source AUTHORIZER), whose usage plan throttles each registered key; a revoked key is disabled there too.
 */
export function gatewayKeys(usagePlanId: string, client: APIGatewayClient): KeyRegistry {
  return {
    async register(apiKey: string, merchantId: string): Promise<void> {
      const created = await client.send(
        new CreateApiKeyCommand({
          name: apiKey,
          value: apiKey,
          enabled: true,
          description: `merchant ${merchantId}`,
        }),
      );
      await client.send(
        new CreateUsagePlanKeyCommand({ usagePlanId, keyId: created.id, keyType: 'API_KEY' }),
      );
    },
    async disable(apiKey: string): Promise<void> {
      const { items } = await client.send(new GetApiKeysCommand({ nameQuery: apiKey, includeValues: false }));
      for (const key of (items ?? []).filter((item) => item.name === apiKey)) {
        await client.send(
          new UpdateApiKeyCommand({
            apiKey: key.id,
            patchOperations: [{ op: 'replace', path: '/enabled', value: 'false' }],
          }),
        );
      }
    },
  };
}
