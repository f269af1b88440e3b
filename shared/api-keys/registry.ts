import type { KeyRegistry } from '#shared/api-keys/lifecycle.ts';
import type { ApiKeyRecord } from '#shared/api-keys/store.ts';
import { gatewayKeys } from '#shared/api-keys/usage-plan.ts';
import { apiGateway } from '#shared/aws/api-gateway.ts';
import { config } from '#shared/config.ts';

let registry: Promise<KeyRegistry | undefined> | undefined;

/**
 * The usage plan a dashboard-made key is registered in: on AWS the stage's plan, found by its name
 * once per container (the stack cannot hand its functions the plan's id: the plan depends on them);
 * `USAGE_PLAN_ID` where set; locally none (the local gateway limits every verified key).
 */
export function keyRegistry(): Promise<KeyRegistry | undefined> {
  registry ??= (async () => {
    const { usagePlanId, usagePlanName, apiGatewayEndpoint } = config.dashboard;
    if (!usagePlanId && !usagePlanName) return undefined;
    const gateway = apiGateway({ region: config.region, endpoint: apiGatewayEndpoint });
    let planId = usagePlanId;
    if (!planId) {
      planId = (await gateway.getUsagePlans()).find((plan) => plan.name === usagePlanName)?.id;
      if (!planId) throw new Error(`no usage plan named ${usagePlanName}`);
    }
    return gatewayKeys(planId, gateway);
  })().catch((error: unknown) => {
    registry = undefined;
    throw error;
  });
  return registry;
}

/** A key as the dashboard shows it (docs/dashboard-api.md): never its secret's hash. */
export function toApiKey(record: ApiKeyRecord, now = Date.now()) {
  const expired = record.expires_at !== undefined && Date.parse(record.expires_at) <= now;
  return {
    api_key: record.api_key,
    status: record.status === 'active' && expired ? 'expired' : record.status,
    allowed_ips: record.allowed_ips ?? [],
    created_at: record.created_at,
    expires_at: record.expires_at ?? null,
    last_used_at: record.last_used_at ?? null,
    revoked_at: record.revoked_at ?? null,
  };
}
