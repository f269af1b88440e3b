import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import type { KeyRegistry } from '#shared/api-keys/lifecycle.ts';
import type { ApiKeyRecord } from '#shared/api-keys/store.ts';
import { gatewayKeys } from '#shared/api-keys/usage-plan.ts';
import { config } from '#shared/config.ts';

let registry: KeyRegistry | undefined;

/**
 * The usage plan a dashboard-made key is registered in: on AWS (`USAGE_PLAN_ID` set), the stage's
 * plan, its client made on first use; locally none (the local gateway limits every verified key).
 */
export function keyRegistry(): KeyRegistry | undefined {
  const usagePlanId = config.dashboard.usagePlanId;
  if (!usagePlanId) return undefined;
  registry ??= gatewayKeys(usagePlanId, new APIGatewayClient({ region: config.region }));
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
