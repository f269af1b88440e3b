import type { KeyRegistry } from '#shared/api-keys/lifecycle.ts';
import type { ApiGateway } from '#shared/aws/api-gateway.ts';

/**
 * The stage's API Gateway side of a key: the authorizer hands API Gateway the verified key (key
 * source AUTHORIZER), whose usage plan throttles each registered key; a revoked key is disabled there too.
 */
export function gatewayKeys(usagePlanId: string, gateway: ApiGateway): KeyRegistry {
  return {
    async register(apiKey: string, merchantId: string): Promise<void> {
      const created = await gateway.createApiKey({
        name: apiKey,
        value: apiKey,
        enabled: true,
        description: `merchant ${merchantId}`,
      });
      await gateway.createUsagePlanKey(usagePlanId, created.id);
    },
    async disable(apiKey: string): Promise<void> {
      const named = await gateway.getApiKeys(apiKey);
      for (const key of named.filter((item) => item.name === apiKey)) {
        await gateway.updateApiKey(key.id, [{ op: 'replace', path: '/enabled', value: 'false' }]);
      }
    },
  };
}
