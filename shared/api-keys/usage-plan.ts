import type { KeyRegistry } from '#shared/api-keys/lifecycle.ts';
import type { ApiGateway } from '#shared/aws/api-gateway.ts';

/**
 * The stage's API Gateway side of a key: the authorizer hands API Gateway the verified key (key
 * source AUTHORIZER), whose usage plan throttles each registered key. A key that can no longer work
 * (revoked, expired, or registered for a key never stored) is deleted there: an account holds
 * 10,000 keys per Region, for every stage, and cannot be given more.
 */
export function gatewayKeys(usagePlanId: string, gateway: ApiGateway): KeyRegistry {
  return {
    // Each step may have been done by an attempt whose answer was lost (the retry is then told
    // `ConflictException`): the key's value is new and ours alone, so the conflict is our own work.
    async register(apiKey: string, merchantId: string): Promise<void> {
      const keyId = await gateway
        .createApiKey({ name: apiKey, value: apiKey, enabled: true, description: `merchant ${merchantId}` })
        .then(
          (created) => created.id,
          async (error: unknown) => {
            if (!conflict(error)) throw error;
            const named = (await gateway.getApiKeys(apiKey)).find((key) => key.name === apiKey);
            if (!named) throw error;
            return named.id;
          },
        );
      await gateway.createUsagePlanKey(usagePlanId, keyId).catch(async (error: unknown) => {
        // Already in the plan: a fresh key can be in no other.
        if (conflict(error)) return;
        // Never stored, so never usable: not left to take a place in the account's quota.
        await gateway.deleteApiKey(keyId).catch(() => undefined);
        throw error;
      });
    },
    async remove(apiKey: string): Promise<void> {
      const named = await gateway.getApiKeys(apiKey);
      for (const key of named.filter((item) => item.name === apiKey)) {
        await gateway.deleteApiKey(key.id).catch((error: unknown) => {
          // Deleted meanwhile (a retry after a lost answer, or a second removal).
          if ((error as Error).name !== 'NotFoundException') throw error;
        });
      }
    },
  };
}

const conflict = (error: unknown) => (error as Error).name === 'ConflictException';
