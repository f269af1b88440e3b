import { awsService, type ServiceOptions } from '#shared/aws/service.ts';

/**
 * The five API Gateway management calls the key lifecycle makes (find the usage plan, create a key,
 * add it to the plan, find a key by name, delete it), as the REST requests the SDK's
 * `@aws-sdk/client-api-gateway` sends (`shared/aws/service.ts`: the client was 59 KB of each key
 * route). `test/integration/api-gateway.test.ts` holds each request to the SDK client's.
 */
export interface ApiGateway {
  /** Every usage plan of the account and region (all pages). */
  getUsagePlans(): Promise<{ id: string; name?: string }[]>;
  createApiKey(key: {
    name: string;
    value: string;
    enabled: boolean;
    description: string;
  }): Promise<{ id: string }>;
  createUsagePlanKey(usagePlanId: string, keyId: string): Promise<void>;
  /** The keys whose name starts with `nameQuery` (API Gateway matches a prefix), without values. */
  getApiKeys(nameQuery: string): Promise<{ id: string; name?: string }[]>;
  /** Deletes a key (it leaves every usage plan with it). */
  deleteApiKey(keyId: string): Promise<void>;
}

export function apiGateway(options: Omit<ServiceOptions, 'service'>): ApiGateway {
  const send = awsService({ ...options, service: 'apigateway' });
  const call = (method: string, path: string, query: Record<string, string> = {}, body?: object) =>
    send({
      method,
      path,
      query,
      body,
      headers: { accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}) },
    });

  /** Every item of a listing, page by page (`position` names the next page). */
  async function all(path: string, query: Record<string, string>) {
    const items: Record<string, unknown>[] = [];
    let position: string | undefined;
    do {
      const page = await call('GET', path, { ...query, ...(position ? { position } : {}) });
      items.push(...((page.item as Record<string, unknown>[] | undefined) ?? []));
      position = page.position as string | undefined;
    } while (position);
    return items as { id: string; name?: string }[];
  }

  return {
    getUsagePlans: () => all('/usageplans', { limit: '500' }),
    async createApiKey(key) {
      const created = await call('POST', '/apikeys', {}, key);
      return { id: String(created.id) };
    },
    async createUsagePlanKey(usagePlanId, keyId) {
      await call(
        'POST',
        `/usageplans/${encodeURIComponent(usagePlanId)}/keys`,
        {},
        { keyId, keyType: 'API_KEY' },
      );
    },
    getApiKeys: (nameQuery) => all('/apikeys', { name: nameQuery, includeValues: 'false' }),
    async deleteApiKey(keyId) {
      await call('DELETE', `/apikeys/${encodeURIComponent(keyId)}`);
    },
  };
}
