import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nagSummary } from '#infra/nag.ts';
import { buildPaymentsApp } from '#infra/payments-app.ts';
import { BATCH_READ_ACTIONS, READ_ACTIONS, WRITE_ACTIONS } from '#infra/table-grants.ts';
import {
  CONTRADICTED_SETTLEMENT,
  EVENT_NOT_FANNED_OUT,
  OVERDUE_TRANSFER,
  RECIPIENT_NOT_CONFIRMED,
  UNMATCHED_PAYMENT,
  UNREADABLE_TRANSFER_ANSWER,
  WEBHOOK_REJECTED,
} from '#shared/definitions/alerts.ts';
import {
  countsWithoutKey,
  dashboardPaths,
  keyedPaths,
  PUBLIC_PATHS,
  webhookPaths,
} from '#shared/definitions/keyless.ts';
import { deadLetterQueueName, PAYMENT_EVENTS_QUEUE, QUEUE_LIST } from '#shared/definitions/queues.ts';
import {
  API_KEY_AUTHORIZER,
  DASHBOARD_PREFIX,
  functionOf,
  LEDGER_TABLES,
  METHOD_NOT_ALLOWED_FUNCTION,
  OPENAPI_PATHS,
  RATE_LIMIT,
  ROUTES,
  type Route,
  servedPaths,
} from '#shared/definitions/routes.ts';
import { STREAMS } from '#shared/definitions/streams.ts';
import { TABLE_LIST, type TABLES } from '#shared/definitions/tables.ts';
import { FAILED_ITEMS_METRIC, METRICS_NAMESPACE } from '#shared/metrics.ts';
import { PROJECT_ROOT } from '#test/support/gateway.ts';
import { type WafStatement, wafMatches } from '#test/support/waf.ts';

type Resource = { Type: string; Properties: Record<string, unknown> };
const outdirs: string[] = [];

/** The app as `cdk synth` builds it (cdk.json's context), without bundling, for one stage. */
function synth(stage: string, extraContext: Record<string, unknown> = {}) {
  const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  };
  const outdir = mkdtempSync(path.join(tmpdir(), 'cdk-test-'));
  outdirs.push(outdir);
  const app = new App({
    outdir,
    context: { ...cdkJson.context, stage, 'aws:cdk:bundling-stacks': [], ...extraContext },
  });
  const stack = buildPaymentsApp(app);
  // Runs the cdk-nag validation plugin: any unacknowledged finding throws here.
  app.synth();
  const template = Template.fromStack(stack);
  return { stack, template, resources: template.toJSON().Resources as Record<string, Resource>, outdir };
}

let dev: ReturnType<typeof synth>;
let prod: ReturnType<typeof synth>;
beforeAll(() => {
  dev = synth('dev');
  prod = synth('prod', { partner: 'sandbox' });
});
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

const ofType = (resources: Record<string, Resource>, type: string) =>
  Object.entries(resources).filter(([, r]) => r.Type === type);

/** The service's own functions (CDK's BucketDeployment brings one of its own, unnamed). */
const serviceFunctions = (resources: Record<string, Resource>) =>
  ofType(resources, 'AWS::Lambda::Function').filter(([, r]) =>
    String(r.Properties.FunctionName).startsWith('naira-'),
  );

/** Full paths of the REST API's resources, from their PathPart/ParentId chain. */
function resourcePaths(resources: Record<string, Resource>): Map<string, string> {
  const paths = new Map<string, string>();
  const pathOf = (id: string): string => {
    const known = paths.get(id);
    if (known !== undefined) return known;
    const resource = resources[id];
    if (resource?.Type !== 'AWS::ApiGateway::Resource') return '';
    const parent = resource.Properties.ParentId as { Ref?: string; 'Fn::GetAtt'?: string[] };
    const full = `${parent.Ref ? pathOf(parent.Ref) : ''}/${resource.Properties.PathPart as string}`;
    paths.set(id, full);
    return full;
  };
  for (const [id] of ofType(resources, 'AWS::ApiGateway::Resource')) pathOf(id);
  return paths;
}

describe('the AWS stack', () => {
  it('has one nodejs22.x arm64 function per route, queue consumer and stream consumer, plus the requery and the authorizer, each named after its handler file', () => {
    const functions = serviceFunctions(dev.resources).map(([, r]) => r.Properties);
    // The one other function: CDK's BucketDeployment, which copies the dashboard's build at deploy.
    expect(ofType(dev.resources, 'AWS::Lambda::Function').length - functions.length).toBe(1);
    const expected = [
      ...new Set(ROUTES.map(functionOf)),
      ...QUEUE_LIST.map((q) => q.consumer),
      ...STREAMS.map((s) => s.consumer),
      'requery-transfers',
      API_KEY_AUTHORIZER.name,
      METHOD_NOT_ALLOWED_FUNCTION,
    ];
    expect(functions).toHaveLength(expected.length);
    const names = functions.map((f) => f.FunctionName).sort();
    expect(names).toEqual(expected.map((name) => `naira-dev-${name}`).sort());
    for (const fn of functions) {
      expect(fn).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Handler: 'index.handler' });
      const variables = (fn.Environment as { Variables: Record<string, string> }).Variables;
      expect(variables).toMatchObject({ TABLE_PREFIX: 'naira-dev-' });
      // No --enable-source-maps: it parsed the bundle's source map at every cold start (~10 ms);
      // logged stacks are mapped with `npm run stack` instead.
      expect(variables.NODE_OPTIONS).toBeUndefined();
    }
    for (const name of expected) {
      expect(() => readFileSync(path.join(PROJECT_ROOT, 'functions', `${name}.ts`))).not.toThrow();
    }
  });

  it("sums up cdk-nag's findings from the synthesized report: none left, the acknowledged ones counted", () => {
    for (const { outdir } of [dev, prod]) {
      expect(nagSummary(outdir)).toMatch(
        /^cdk-nag \(AwsSolutions\): 0 unacknowledged findings, [1-9]\d* acknowledged \([1-9]\d* rules, reasons in infra\/nag\.ts\)$/,
      );
    }
  });

  it('serves every route at both paths, with an API key exactly where the route table asks for one', () => {
    const paths = resourcePaths(dev.resources);
    const methods = ofType(dev.resources, 'AWS::ApiGateway::Method').map(([, r]) => r.Properties);
    const served = new Map<string, boolean>();
    for (const method of methods) {
      const resourcePath = paths.get((method.ResourceId as { Ref: string }).Ref) ?? '';
      if (method.HttpMethod === 'ANY' || resourcePath.endsWith('/openapi.json')) continue;
      served.set(`${method.HttpMethod} ${resourcePath}`, method.ApiKeyRequired === true);
    }
    const expected = new Map(
      ROUTES.flatMap((route) =>
        servedPaths(route).map((p) => [`${route.method} ${p}`, route.auth === 'api_key'] as const),
      ),
    );
    expect(served).toEqual(expected);
    expect(expected.get('GET /banks/list')).toBe(false);
    expect(expected.get('POST /webhooks/payments')).toBe(false);
    expect(expected.get('POST /api/v1/developer/transfers')).toBe(true);
    // Every served path also answers other methods with 405 and Allow.
    const anyMethods = methods.filter((m) => m.HttpMethod === 'ANY');
    expect(anyMethods).toHaveLength(new Set(ROUTES.flatMap(servedPaths)).size);
  });

  it('answers another method with 405 for any content type: a Lambda proxy integration, no mapping template to miss (415)', () => {
    const [refuseId] = ofType(dev.resources, 'AWS::Lambda::Function').find(
      ([, r]) => r.Properties.FunctionName === `naira-dev-${METHOD_NOT_ALLOWED_FUNCTION}`,
    ) as [string, Resource];
    const anyMethods = ofType(dev.resources, 'AWS::ApiGateway::Method')
      .map(([, r]) => r.Properties)
      .filter((m) => m.HttpMethod === 'ANY');
    expect(anyMethods.length).toBeGreaterThan(0);
    for (const method of anyMethods) {
      const integration = method.Integration as Record<string, unknown>;
      expect(integration.Type).toBe('AWS_PROXY');
      expect(integration.RequestTemplates).toBeUndefined();
      expect(JSON.stringify(integration.Uri)).toContain(refuseId);
      expect(method.ApiKeyRequired).not.toBe(true);
    }
    // One API-wide invoke permission, not two per path (the function policy stays small).
    const permissions = ofType(dev.resources, 'AWS::Lambda::Permission').filter(([, r]) =>
      JSON.stringify(r.Properties.FunctionName).includes(refuseId),
    );
    expect(permissions).toHaveLength(1);
    // No mock answers a method with a template for one content type only.
    for (const [, method] of ofType(dev.resources, 'AWS::ApiGateway::Method')) {
      const integration = method.Properties.Integration as Record<string, unknown>;
      if (integration.Type === 'MOCK') expect(method.Properties.HttpMethod).toBe('GET');
    }
  });

  it('limits requests without a key per client IP with WAF on the stage: GET /banks and any request lacking a credential header, 429 with the contract body', () => {
    expect(PUBLIC_PATHS).toEqual([
      '/api/v1/developer/banks',
      '/api/v1/developer/banks/list',
      '/banks',
      '/banks/list',
    ]);
    const acls = ofType(dev.resources, 'AWS::WAFv2::WebACL');
    expect(acls).toHaveLength(1);
    const [aclId, acl] = acls[0] as [string, Resource];
    expect(acl.Properties).toMatchObject({ Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
    const bodies = acl.Properties.CustomResponseBodies as Record<string, { Content: string }>;
    expect(JSON.parse(bodies.rateLimited?.Content ?? '')).toEqual({
      status: 'error',
      message: 'Rate limit exceeded',
      code: 'rate_limited',
    });
    type WafRule = {
      Action: { Block: { CustomResponse: unknown } };
      Statement: { RateBasedStatement: { ScopeDownStatement: WafStatement } };
    };
    const [rule, ...others] = acl.Properties.Rules as WafRule[];
    expect(others).toEqual([]);
    // Samples would keep whole requests, merchants' `X-API-Secret` headers too: never sampled.
    const sampled = [
      acl.Properties.VisibilityConfig,
      (rule as { VisibilityConfig?: unknown })?.VisibilityConfig,
    ];
    expect(sampled).toEqual([
      expect.objectContaining({ SampledRequestsEnabled: false, CloudWatchMetricsEnabled: true }),
      expect.objectContaining({ SampledRequestsEnabled: false, CloudWatchMetricsEnabled: true }),
    ]);
    expect(rule?.Action.Block.CustomResponse).toEqual({
      ResponseCode: 429,
      CustomResponseBodyKey: 'rateLimited',
      ResponseHeaders: [{ Name: 'Retry-After', Value: String(RATE_LIMIT.windowSeconds) }],
    });
    const limit = rule?.Statement.RateBasedStatement;
    expect(limit).toMatchObject({
      AggregateKeyType: 'IP',
      Limit: RATE_LIMIT.requests,
      EvaluationWindowSec: RATE_LIMIT.windowSeconds,
    });
    // Which requests the synthesized rule counts, as WAF evaluates it (the stage in front of the path).
    const scope = limit?.ScopeDownStatement as WafStatement;
    const key = { 'X-API-Key': 'pk_test', 'X-API-Secret': 'sk_test' };
    // Each answer is also the local gateway's (countsWithoutKey, which the rule is built from).
    const counted = (method: string, path: string, headers: Record<string, string> = {}) => {
      const waf = wafMatches(scope, { method, path: `/dev${path}`, headers });
      const lowerCase = Object.fromEntries(
        Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
      );
      expect(
        countsWithoutKey({ method, path: `/dev${path}`, headers: lowerCase }, 'dev'),
        `${method} ${path}`,
      ).toBe(waf);
      // Locally, with no stage in front.
      expect(countsWithoutKey({ method, path, headers: lowerCase }), `local ${method} ${path}`).toBe(waf);
      return waf;
    };
    for (const path of PUBLIC_PATHS) {
      expect(counted('GET', path)).toBe(true);
      // Credentials sent with GET /banks are allowed (API.md §2): still a public request.
      expect(counted('GET', path, key)).toBe(true);
    }
    // The OpenAPI document, API Gateway's own answer: counted as any request without a key.
    for (const path of OPENAPI_PATHS) expect(counted('GET', path)).toBe(true);
    // A request lacking a credential header: API Gateway answers 401 without the authorizer.
    expect(counted('GET', '/balance')).toBe(true);
    expect(counted('POST', '/api/v1/developer/transfers', { 'X-API-Key': 'pk_test' })).toBe(true);
    expect(counted('GET', '/transactions', { 'x-api-secret': 'sk_test' })).toBe(true);
    expect(counted('GET', '/balance', { 'X-API-Key': 'pk_test', 'X-API-Secret': '' })).toBe(true);
    expect(counted('GET', '/no-such-route')).toBe(true);
    expect(counted('GET', '/openapi.json')).toBe(true);
    // A public path whatever the method, preflight or credentials.
    expect(counted('POST', '/banks', key)).toBe(true);
    expect(counted('OPTIONS', '/banks/list')).toBe(true);
    expect(counted('PUT', '/transfers')).toBe(true);
    // Both headers on a served route: the authorizer counts the failed ones; valid ones are
    // limited per key. Every keyed route, at both of its paths, with the stage and without.
    expect(counted('GET', '/balance', key)).toBe(false);
    expect(counted('GET', '/balance', { 'x-api-key': 'pk_test', 'x-api-secret': 'sk_test' })).toBe(false);
    const keyed = ROUTES.filter((route) => route.auth === 'api_key');
    expect(keyed.length).toBeGreaterThan(10);
    for (const route of keyed) {
      for (const path of servedPaths(route)) {
        const sent = path.replaceAll(/\{\w+\}/g, 'ref_1');
        expect(counted(route.method, sent, key), `${route.method} ${sent}`).toBe(false);
        // API Gateway (REST) routes a trailing slash to the same method, and so does the gateway.
        expect(counted(route.method, `${sent}/`, key), `${route.method} ${sent}/`).toBe(false);
        // Without a credential header it is counted, as API Gateway refuses it before the authorizer.
        expect(counted(route.method, sent)).toBe(true);
      }
    }
    // No route answers, whatever credentials are sent (API.md §11: an invented key header never
    // escapes the per-IP limit): an unknown path (API Gateway's own 404), a deeper or shallower
    // one, two trailing slashes, another stage's or prefix's path, another method (the 405
    // function; a CORS preflight too, as no route answers OPTIONS), a path that merely contains the
    // partner webhook's or another method there, and the dashboard's API where it serves nothing.
    for (const [method, path] of [
      ['GET', '/no-such-route'],
      ['GET', '/transactions/ref_1/more'],
      ['GET', '/payments'],
      ['GET', '/balance//'],
      ['OPTIONS', '/balance'],
      ['OPTIONS', '/no-such-route'],
      ['GET', '/webhooks/payments'],
      ['POST', '/webhooks/payments/more'],
      ['GET', '/nope/webhooks/paystack'],
      ['DELETE', '/x/webhooks/payments/y'],
      ['POST', `${DASHBOARD_PREFIX}/webhooks/paystack`],
      ['GET', '/prod/balance'],
      ['GET', '/api/v2/developer/balance'],
      ['GET', '/api/v1/developer/api/v1/developer/balance'],
      ['DELETE', '/balance'],
      ['HEAD', '/balance'],
      ['PUT', '/webhook-endpoints/ref_1'],
      ['POST', '/balance'],
      ['GET', `${DASHBOARD_PREFIX}/balance`],
      ['DELETE', `${DASHBOARD_PREFIX}/keys`],
    ] as const) {
      expect(counted(method, path, key), `${method} ${path}`).toBe(true);
      expect(counted(method, path, { ...key, Authorization: 'Bearer x' }), `${method} ${path}`).toBe(true);
    }
    // The stage receives only its own paths: one without the stage in front is not a served one.
    expect(wafMatches(scope, { method: 'GET', path: '/balance', headers: key })).toBe(true);
    // WAF's regular expressions: no capturing group and no alternation (WAF refuses the first and
    // limits the second), and within its length.
    const patterns = [...keyedPaths('dev'), ...dashboardPaths('dev'), ...webhookPaths('dev')].flatMap(
      (entry) => entry.patterns,
    );
    const patterned = (ROUTES as readonly Route[]).filter(
      (route) => route.auth === 'api_key' || route.auth === 'webhook' || route.dashboard,
    );
    expect(patterns).toHaveLength(patterned.flatMap((route) => route.paths).length);
    for (const pattern of patterns) {
      expect(pattern).not.toMatch(/\((?!\?:)|\|/);
      expect(pattern.length).toBeLessThanOrEqual(512);
    }
    // Never what the partner webhook or a route of the dashboard's API answers.
    const webhook = ROUTES.filter((route) => route.auth === 'webhook').flatMap((route) => servedPaths(route));
    expect(webhook).toContain('/webhooks/paystack');
    for (const path of webhook) {
      expect(counted('POST', path)).toBe(false);
      expect(counted('POST', `${path}/`)).toBe(false);
      expect(counted('POST', path, key)).toBe(false);
    }
    expect(counted('GET', `${DASHBOARD_PREFIX}/keys`, { Authorization: 'Bearer x' })).toBe(false);
    expect(counted('POST', `${DASHBOARD_PREFIX}/sessions`)).toBe(false);
    expect(counted('POST', `${DASHBOARD_PREFIX}/keys/key_1/roll`)).toBe(false);
    // On the API's own stage.
    const [[, association] = []] = ofType(dev.resources, 'AWS::WAFv2::WebACLAssociation');
    expect(association?.Properties.WebACLArn).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
    expect(JSON.stringify(association?.Properties.ResourceArn)).toContain('/stages/');
  });

  it('limits each API key with a usage plan from the shared RATE_LIMIT (100 per 60 s, burst 100), keys from the authorizer', () => {
    dev.template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      Throttle: {
        RateLimit: RATE_LIMIT.requests / RATE_LIMIT.windowSeconds,
        BurstLimit: RATE_LIMIT.requests,
      },
    });
    // The usage plan counts the key the authorizer verified, never the header as presented.
    dev.template.hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'AUTHORIZER' });
    dev.template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'dev',
      AccessLogSetting: Match.objectLike({ DestinationArn: Match.anyValue() }),
      MethodSettings: Match.arrayWith([
        Match.objectLike({ ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 }),
      ]),
    });
  });

  it("applies the per-key usage plan to the API's stage (a plan on no stage limits no key)", () => {
    const [restApiId] = ofType(dev.resources, 'AWS::ApiGateway::RestApi')[0] as [string, Resource];
    const [stageId] = ofType(dev.resources, 'AWS::ApiGateway::Stage')[0] as [string, Resource];
    const plans = ofType(dev.resources, 'AWS::ApiGateway::UsagePlan');
    expect(plans).toHaveLength(1);
    expect((plans[0] as [string, Resource])[1].Properties.ApiStages).toEqual([
      expect.objectContaining({ ApiId: { Ref: restApiId }, Stage: { Ref: stageId } }),
    ]);
  });

  it('gives every queue its own dead-letter queue, after the receives its definition says', () => {
    const queues = ofType(dev.resources, 'AWS::SQS::Queue');
    const idOf = (name: string) => queues.find(([, q]) => q.Properties.QueueName === name)?.[0];
    for (const definition of QUEUE_LIST) {
      const main = queues.find(([, q]) => q.Properties.QueueName === `naira-dev-${definition.name}`)?.[1];
      expect(main?.Properties.RedrivePolicy, definition.name).toEqual({
        deadLetterTargetArn: { 'Fn::GetAtt': [idOf(`naira-dev-${deadLetterQueueName(definition)}`), 'Arn'] },
        maxReceiveCount: definition.maxReceiveCount,
      });
    }
  });

  it('puts every api_key route, and only those, behind one REQUEST authorizer cached ≤ 30 s per key, secret and IP', () => {
    const authorizers = ofType(dev.resources, 'AWS::ApiGateway::Authorizer').filter(
      ([, a]) => a.Properties.Type === 'REQUEST',
    );
    expect(authorizers).toHaveLength(1);
    const [authorizerId, authorizer] = authorizers[0] as [string, Resource];
    expect(authorizer.Properties).toMatchObject({
      Type: 'REQUEST',
      IdentitySource:
        'method.request.header.X-API-Key,method.request.header.X-API-Secret,context.identity.sourceIp',
      AuthorizerResultTtlInSeconds: 30,
    });
    expect(JSON.stringify(authorizer.Properties.AuthorizerUri)).toContain('Fnauthorizeapikey');
    const methods = ofType(dev.resources, 'AWS::ApiGateway::Method').filter(
      ([, m]) => !['ANY', 'OPTIONS'].includes(m.Properties.HttpMethod as string),
    );
    const gated = ROUTES.filter((r) => r.auth === 'api_key').flatMap(servedPaths).length;
    const custom = methods.filter(([, m]) => m.Properties.AuthorizationType === 'CUSTOM');
    expect(custom).toHaveLength(gated);
    for (const [, method] of custom) {
      expect(method.Properties.AuthorizerId).toEqual({ Ref: authorizerId });
      expect(method.Properties.ApiKeyRequired).toBe(true);
    }
    for (const [, method] of methods.filter(([, m]) => m.Properties.AuthorizationType !== 'CUSTOM')) {
      expect(method.Properties.ApiKeyRequired ?? false).toBe(false);
      // The rest are public, or dashboard routes behind the Cognito authorizer.
      expect([undefined, 'NONE', 'COGNITO_USER_POOLS']).toContain(method.Properties.AuthorizationType);
    }
  });

  it('answers 401, 429, unknown paths and its other refusals with the contract bodies', () => {
    const responses = new Map(
      ofType(dev.resources, 'AWS::ApiGateway::GatewayResponse').map(([, r]) => [
        r.Properties.ResponseType,
        r.Properties,
      ]),
    );
    for (const type of ['UNAUTHORIZED', 'INVALID_API_KEY']) {
      expect(responses.get(type)).toMatchObject({
        StatusCode: '401',
        ResponseTemplates: { 'application/json': '{"status":"error","message":"Invalid API credentials"}' },
      });
    }
    // ACCESS_DENIED is the authorizer's Deny: a client IP past its failed attempts.
    for (const type of ['THROTTLED', 'QUOTA_EXCEEDED', 'ACCESS_DENIED']) {
      expect(responses.get(type)).toMatchObject({
        StatusCode: '429',
        ResponseTemplates: {
          'application/json': '{"status":"error","message":"Rate limit exceeded","code":"rate_limited"}',
        },
        ResponseParameters: { 'gatewayresponse.header.Retry-After': "'60'" },
      });
    }
    // Any other 4xx of API Gateway's own keeps its status and words, in the envelope.
    expect(responses.get('DEFAULT_4XX')?.ResponseTemplates).toEqual({
      'application/json':
        '{"status":"error","message":$context.error.messageString,"code":"validation_error"}',
    });
    // A body API Gateway cannot decompress: 415 in the contract's code, as the local gateway answers.
    expect(responses.get('UNSUPPORTED_MEDIA_TYPE')).toMatchObject({
      StatusCode: '415',
      ResponseTemplates: { 'application/json': expect.stringContaining('"code":"unsupported_media_type"') },
    });
    expect(responses.get('MISSING_AUTHENTICATION_TOKEN')).toMatchObject({
      StatusCode: '404',
      ResponseTemplates: { 'application/json': expect.stringContaining('"code":"route_not_found"') },
    });
    for (const response of responses.values()) {
      expect(response.ResponseParameters).toMatchObject({
        'gatewayresponse.header.Content-Type': "'application/json; charset=utf-8'",
        'gatewayresponse.header.X-Content-Type-Options': "'nosniff'",
        'gatewayresponse.header.X-Request-Id': 'context.requestId',
      });
    }
  });

  it('serves the generated OpenAPI document at both paths from API Gateway, without credentials', () => {
    const paths = resourcePaths(dev.resources);
    const documents = ofType(dev.resources, 'AWS::ApiGateway::Method')
      .map(([, r]) => r.Properties)
      .filter((method) =>
        (paths.get((method.ResourceId as { Ref: string }).Ref) ?? '').endsWith('/openapi.json'),
      );
    expect(documents.map((m) => paths.get((m.ResourceId as { Ref: string }).Ref)).sort()).toEqual([
      '/api/v1/developer/openapi.json',
      '/openapi.json',
    ]);
    for (const method of documents) {
      expect(method).toMatchObject({ HttpMethod: 'GET', Integration: { Type: 'MOCK' } });
      expect(method.ApiKeyRequired).not.toBe(true);
      const template = JSON.stringify(method.Integration);
      expect(template).toContain('"openapi\\":\\"3.1.0');
      expect(template).toContain('createTransfer');
    }
  });

  it("gives the served OpenAPI document absolute servers: the stage's URL from the request context, at both paths", () => {
    const templates = ofType(dev.resources, 'AWS::ApiGateway::Method')
      .map(
        ([, r]) =>
          r.Properties.Integration as {
            Type: string;
            IntegrationResponses: { ResponseTemplates: Record<string, string> }[];
          },
      )
      .filter((integration) => integration.Type === 'MOCK')
      .map((integration) => integration.IntegrationResponses[0]?.ResponseTemplates['application/json'] ?? '');
    expect(templates).toHaveLength(2);
    for (const template of templates) {
      // Only the base URL is evaluated by Velocity: everything else sits in unparsed blocks.
      const evaluated = template.replace(/#\[\[[\s\S]*?\]\]#/g, '');
      expect(evaluated).toMatch(/^(https:\/\/\$context\.domainName\/\$context\.stage)+$/);
      // API Gateway's evaluation, for a request to the dev stage of one API.
      const base = 'https://abc123.execute-api.eu-west-1.amazonaws.com/dev';
      const served = JSON.parse(
        template
          .replaceAll('$context.domainName', 'abc123.execute-api.eu-west-1.amazonaws.com')
          .replaceAll('$context.stage', 'dev')
          .replace(/#\[\[|\]\]#/g, ''),
      ) as { servers: { url: string }[]; info: { description: string } };
      expect(served.servers.map((server) => server.url)).toEqual([`${base}/api/v1/developer`, base]);
      expect(served.info.description).toContain(base);
      expect(JSON.stringify(served)).not.toContain('stage-url.invalid');
    }
  });

  it('gives the webhook a function URL with auth NONE (its own signature check)', () => {
    dev.template.resourceCountIs('AWS::Lambda::Url', 1);
    const [, url] = ofType(dev.resources, 'AWS::Lambda::Url')[0] as [string, Resource];
    expect(url.Properties.AuthType).toBe('NONE');
    const target = (url.Properties.TargetFunctionArn as { 'Fn::GetAtt': string[] })[
      'Fn::GetAtt'
    ][0] as string;
    expect(dev.resources[target]?.Properties.FunctionName).toBe('naira-dev-receive-partner-webhook');
  });

  it('queues payment events encrypted, over TLS only, with a 14-day DLQ after 5 receives and a consumer reporting item failures', () => {
    const queues = ofType(dev.resources, 'AWS::SQS::Queue').map(([id, r]) => [id, r.Properties] as const);
    // Each queue and its DLQ, and where each table stream describes the batches it gave up.
    expect(queues).toHaveLength(QUEUE_LIST.length * 2 + STREAMS.length);
    for (const [, queue] of queues)
      expect(queue).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 1_209_600 });
    const main = queues.find(([, q]) => q.QueueName === 'naira-dev-payment-events')?.[1];
    expect(main).toMatchObject({
      VisibilityTimeout: PAYMENT_EVENTS_QUEUE.consumerTimeoutSeconds * 6,
      RedrivePolicy: { maxReceiveCount: 5 },
    });
    for (const [, policy] of ofType(dev.resources, 'AWS::SQS::QueuePolicy')) {
      expect(JSON.stringify(policy.Properties)).toContain('"aws:SecureTransport":"false"');
    }
    dev.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: PAYMENT_EVENTS_QUEUE.batchSize,
    });
    // Deliveries to slow endpoints never take every execution of the account.
    dev.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: functionId(dev, 'deliver-webhooks') },
      ScalingConfig: { MaximumConcurrency: 100 },
    });
    const consumer = ofType(dev.resources, 'AWS::Lambda::Function').find(
      ([, r]) => r.Properties.FunctionName === 'naira-dev-process-payment-events',
    );
    expect(consumer?.[1].Properties.Timeout).toBe(PAYMENT_EVENTS_QUEUE.consumerTimeoutSeconds);
  });

  /** The logical id of the function named `naira-<stage>-<name>`. */
  const functionId = (built: typeof dev, name: string) =>
    (
      ofType(built.resources, 'AWS::Lambda::Function').find(
        ([, r]) => r.Properties.FunctionName === `naira-${built.stack.node.tryGetContext('stage')}-${name}`,
      ) as [string, Resource]
    )[0];
  const CONSUMERS = [...QUEUE_LIST.map((q) => q.consumer), ...STREAMS.map((s) => s.consumer)];

  it("lets the stage's alarms publish to its alarm topic (whose policy replaces SNS's default), over TLS only", () => {
    const alarms = ofType(dev.resources, 'AWS::CloudWatch::Alarm').map(([, r]) => r.Properties);
    const [[topicId] = []] = ofType(dev.resources, 'AWS::SNS::Topic');
    for (const alarm of alarms) expect(alarm.AlarmActions).toEqual([{ Ref: topicId }]);
    const policies = ofType(dev.resources, 'AWS::SNS::TopicPolicy').map(([, r]) => r.Properties);
    const [policy, ...others] = policies;
    expect(others).toEqual([]);
    expect(policy?.Topics).toEqual([{ Ref: topicId }]);
    type Statement = { Effect: string; Principal?: unknown; Action: string; Condition?: unknown };
    const statements = (policy?.PolicyDocument as { Statement: Statement[] } | undefined)?.Statement ?? [];
    const allows = statements.filter((statement) => statement.Effect === 'Allow');
    expect(allows).toEqual([
      expect.objectContaining({
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: 'sns:Publish',
        Resource: { Ref: topicId },
      }),
    ]);
    const condition = JSON.stringify(allows[0]?.Condition);
    expect(condition).toContain(':alarm:naira-dev-*');
    expect(condition).toContain('aws:SourceAccount');
    // Every alarm's name falls under the allowed pattern.
    for (const alarm of alarms) expect(String(alarm.AlarmName)).toMatch(/^naira-dev-/);
    expect(statements.filter((statement) => statement.Effect === 'Deny')).toEqual([
      expect.objectContaining({ Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    ]);
  });

  it('names every alarm naira-<stage>-<name>, each its own and each in the README runbook', () => {
    const alarms = ofType(dev.resources, 'AWS::CloudWatch::Alarm').map(([, r]) => r.Properties);
    // Named as the runbook names them, after the stage, each its own.
    const names = alarms.map((a) => String(a.AlarmName));
    expect(
      names.every((name) => /^naira-dev-[A-Za-z0-9]+Alarm(-[a-z-]+)?$/.test(name)),
      names.join(),
    ).toBe(true);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(
      expect.arrayContaining(['naira-dev-DeadLettersAlarm-process-payment-events', 'naira-dev-Api5xxAlarm']),
    );
    // The runbook names every alarm: by its name, or by a pattern (`ErrorsAlarm-<consumer>`).
    const runbook =
      readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8').split('## Alarms runbook')[1] ?? '';
    const rowNames = runbook
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? ''));
    const patterns = rowNames.map(
      (name) => new RegExp(`^naira-dev-${name.replace(/<[a-z]+>/g, '[a-z-]+')}$`),
    );
    for (const name of names)
      expect(
        patterns.some((p) => p.test(name)),
        `${name} in the runbook`,
      ).toBe(true);
  });

  it('alarms on dead letters, consumer errors and failed items, queue age, stream lag and give-ups, events not fanned out, throttles, the webhook and requery erring, the API 5xx rate, unmatched payments, overdue transfers and contradicted settlements', () => {
    const alarms = ofType(dev.resources, 'AWS::CloudWatch::Alarm').map(([, r]) => r.Properties);
    const metrics = alarms.map((a) => a.MetricName).sort();
    expect(metrics).toEqual(
      [
        '5XXError',
        // Each queue's dead letters, and what each stream gave up.
        ...QUEUE_LIST.map(() => 'ApproximateNumberOfMessagesVisible'),
        ...STREAMS.map(() => 'ApproximateNumberOfMessagesVisible'),
        ...STREAMS.map(() => 'IteratorAge'),
        'EventsNotFannedOut-dev',
        ...QUEUE_LIST.map(() => 'ApproximateAgeOfOldestMessage'),
        // Each consumer, the requery and the webhook.
        ...Array.from({ length: CONSUMERS.length + 2 }, () => 'Errors'),
        ...CONSUMERS.map(() => 'FailedItems'),
        // Each consumer, the requery, the webhook, and the account as a whole.
        ...Array.from({ length: CONSUMERS.length + 3 }, () => 'Throttles'),
        'Url5xxCount',
        'WebhooksRejected-dev',
        'UnmatchedPayments-dev',
        'OverdueTransfers-dev',
        'ContradictedTransfers-dev',
        'ContradictedTransfersRequery-dev',
        'ContradictedTransfersApi-dev',
        'UnreadableTransferAnswersRequery-dev',
        'UnreadableTransferAnswersApi-dev',
        'UnconfirmedRecipientsRequery-dev',
        'UnconfirmedRecipientsApi-dev',
      ].sort(),
    );
    for (const alarm of alarms) {
      expect(alarm.AlarmActions).toHaveLength(1);
      expect(alarm).toMatchObject({
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
      });
    }
    // Partner webhooks refused: more than 2 in 15 minutes (one may be someone trying the URL).
    dev.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'WebhooksRejected-dev',
      Statistic: 'Sum',
      Period: 900,
      Threshold: 2,
    });
    for (const message of [
      WEBHOOK_REJECTED,
      OVERDUE_TRANSFER,
      UNMATCHED_PAYMENT,
      CONTRADICTED_SETTLEMENT,
      UNREADABLE_TRANSFER_ANSWER,
      RECIPIENT_NOT_CONFIRMED,
      EVENT_NOT_FANNED_OUT,
    ]) {
      dev.template.hasResourceProperties('AWS::Logs::MetricFilter', {
        FilterPattern: Match.stringLikeRegexp(message),
      });
    }
    // A contradicting verdict is met wherever transfers are settled: the consumer, the requery, and
    // POST /transfers with the answer to its send.
    const contradicted = dev.template.findResources('AWS::Logs::MetricFilter', {
      Properties: { FilterPattern: Match.stringLikeRegexp(CONTRADICTED_SETTLEMENT) },
    });
    expect(Object.keys(contradicted)).toHaveLength(3);
  });

  it("alarms on each consumer's failed items: the EMF metric its code writes, per function, any in a minute", () => {
    for (const consumer of CONSUMERS) {
      dev.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: METRICS_NAMESPACE,
        MetricName: FAILED_ITEMS_METRIC,
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId(dev, consumer) } }],
        Statistic: 'Sum',
        Period: 60,
        Threshold: 0,
      });
    }
  });

  it('alarms on queue age, the webhook erring or answering 5xx, and throttles of the consumers, requery, webhook and account', () => {
    for (const queue of QUEUE_LIST) {
      const [queueId] = ofType(dev.resources, 'AWS::SQS::Queue').find(
        ([, r]) => r.Properties.QueueName === `naira-dev-${queue.name}`,
      ) as [string, Resource];
      dev.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
        Statistic: 'Maximum',
        Threshold: queue.maxMessageAgeSeconds,
      });
    }
    expect(PAYMENT_EVENTS_QUEUE.maxMessageAgeSeconds).toBe(300);
    const webhook = functionId(dev, 'receive-partner-webhook');
    for (const metric of ['Errors', 'Url5xxCount', 'Throttles']) {
      dev.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/Lambda',
        MetricName: metric,
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: webhook } }],
      });
    }
    for (const name of [...CONSUMERS, 'requery-transfers']) {
      dev.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'Throttles',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId(dev, name) } }],
      });
    }
    dev.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Throttles',
      Dimensions: Match.absent(),
    });
  });

  it('reserves concurrency for the payment consumer (its pollers capped to match) and caps the public webhook, from context', () => {
    const reserved = (built: typeof dev) =>
      new Map(
        ofType(built.resources, 'AWS::Lambda::Function')
          .filter(([, r]) => r.Properties.ReservedConcurrentExecutions !== undefined)
          .map(([, r]) => [
            String(r.Properties.FunctionName).replace(/^naira-\w+-/, ''),
            r.Properties.ReservedConcurrentExecutions,
          ]),
      );
    const consumerMapping = (built: typeof dev) =>
      ofType(built.resources, 'AWS::Lambda::EventSourceMapping').find(
        ([, r]) =>
          (r.Properties.FunctionName as { Ref: string }).Ref ===
          functionId(built, PAYMENT_EVENTS_QUEUE.consumer),
      )?.[1].Properties;
    // Defaults: 5 for the consumer (and at most 5 pollers), 20 for the webhook, nothing else.
    expect(reserved(dev)).toEqual(
      new Map<string, unknown>([
        [PAYMENT_EVENTS_QUEUE.consumer, 5],
        ['receive-partner-webhook', 20],
      ]),
    );
    expect(consumerMapping(dev)?.ScalingConfig).toEqual({ MaximumConcurrency: 5 });

    const tuned = synth('dev', { paymentConsumerConcurrency: 10, webhookConcurrency: 50 });
    expect(reserved(tuned).get(PAYMENT_EVENTS_QUEUE.consumer)).toBe(10);
    expect(reserved(tuned).get('receive-partner-webhook')).toBe(50);
    expect(consumerMapping(tuned)?.ScalingConfig).toEqual({ MaximumConcurrency: 10 });

    // For accounts with a low concurrency quota: 0 reserves nothing.
    const none = synth('dev', { paymentConsumerConcurrency: 0, webhookConcurrency: 0 });
    expect(reserved(none).size).toBe(0);
    expect(consumerMapping(none)?.ScalingConfig).toBeUndefined();
    expect(() => synth('dev', { paymentConsumerConcurrency: 1 })).toThrow(/0 or at least 2/);
    expect(() => synth('dev', { webhookConcurrency: -3 })).toThrow(/whole number/);
  });

  it('refuses a prod deploy that leaves out its partner, or with Paystack its webhook addresses', () => {
    // A default there would move prod to the sandbox partner, or drop the allowlist, unnoticed.
    expect(() => synth('prod')).toThrow(/-c partner=… is required for stage prod/);
    expect(() => synth('prod', { partner: 'paystack' })).toThrow(
      /-c paystackWebhookIps=… is required for stage prod/,
    );
  });

  it("takes a stage's values from cdk.json's context.stages, under -c, and its deploy settings checked at synth", () => {
    const functionsOf = (synthed: ReturnType<typeof synth>) =>
      ofType(synthed.resources, 'AWS::Lambda::Function').map(
        ([, f]) =>
          (f.Properties.Environment as { Variables: Record<string, unknown> } | undefined)?.Variables ?? {},
      );
    const stages = {
      prod: {
        partner: 'paystack',
        paystackWebhookIps: '52.31.139.75',
        MAX_BALANCE: 5_000_000_000_000,
        PAYSTACK_DVA_BANK: 'titan-paystack',
      },
    };
    const kept = synth('prod', { stages, LOG_LEVEL: 'WARN' });
    const variables = functionsOf(kept).filter((v) => v.TABLE_PREFIX === 'naira-prod-');
    expect(variables.length).toBeGreaterThan(30);
    for (const v of variables) {
      expect(v).toMatchObject({
        PARTNER: 'paystack',
        PAYSTACK_WEBHOOK_IPS: '52.31.139.75',
        MAX_BALANCE: '5000000000000',
        PAYSTACK_DVA_BANK: 'titan-paystack',
        LOG_LEVEL: 'WARN',
      });
      expect(v.TRANSFER_FEE_TIERS).toBeUndefined();
    }
    // Lambda's own filter of JSON lines: DEBUG for DEBUG (at INFO, its default, it drops those),
    // else INFO, never WARN: the FailedItems metric line has no level, which Lambda reads as INFO.
    const levels = (synthed: ReturnType<typeof synth>) =>
      new Set(
        ofType(synthed.resources, 'AWS::Lambda::Function')
          .filter(([, f]) => (f.Properties.FunctionName as string | undefined)?.startsWith('naira-'))
          .map(
            ([, f]) => (f.Properties.LoggingConfig as { ApplicationLogLevel?: string })?.ApplicationLogLevel,
          ),
      );
    expect(levels(kept)).toEqual(new Set(['INFO']));
    expect(levels(synth('dev', { LOG_LEVEL: 'DEBUG' }))).toEqual(new Set(['DEBUG']));
    expect(levels(dev)).toEqual(new Set(['INFO']));
    // The operator CLI's --stage runs with them too.
    const [, parameter] = ofType(kept.resources, 'AWS::SSM::Parameter')[0] as [string, Resource];
    const published = JSON.stringify(parameter.Properties.Value);
    expect(published).toContain('\\"settings\\":{\\"MAX_BALANCE\\":\\"5000000000000\\"');
    expect(published).toContain('\\"PAYSTACK_DVA_BANK\\":\\"titan-paystack\\",\\"LOG_LEVEL\\":\\"WARN\\"}');
    // -c wins over the kept value; nothing kept, nothing set (the functions' defaults).
    const overridden = functionsOf(synth('prod', { stages, paystackWebhookIps: 'none' }));
    expect(
      overridden.filter((v) => v.TABLE_PREFIX === 'naira-prod-').every((v) => v.PAYSTACK_WEBHOOK_IPS === ''),
    ).toBe(true);
    expect(functionsOf(dev).some((v) => 'MAX_BALANCE' in v || 'PAYSTACK_DVA_BANK' in v)).toBe(false);

    // A mistake fails the synth, said as the functions would have said it at cold start.
    expect(() => synth('dev', { TRANSFER_FEE_TIERS: '100:5' })).toThrow(
      /The functions' environment from this deploy's values: TRANSFER_FEE_TIERS: tiers must ascend and end with \*:fee/,
    );
    expect(() => synth('dev', { MAX_BALANCE: '-1' })).toThrow(
      /The functions' environment from this deploy's values: Invalid configuration: MAX_BALANCE/,
    );
    // The stack's own values too, as a stage's block may give them (a number for a bank code).
    expect(() => synth('dev', { stages: { dev: { partnerBankCode: 44 } } })).toThrow(
      /The functions' environment from this deploy's values: Invalid configuration: PARTNER_BANK_CODE/,
    );
    expect(() => synth('dev', { requeryIntervalMinutes: 'often' })).toThrow(
      /The functions' environment from this deploy's values: Invalid configuration: TRANSFER_REQUERY_INTERVAL_SECONDS/,
    );
    expect(() => synth('dev', { MAX_BALANSE: '1' })).toThrow(
      /-c MAX_BALANSE: not a setting a deploy may set/,
    );
    expect(() => synth('dev', { PARTNER_TIMEOUT_MS: '1' })).toThrow(/-c PARTNER_TIMEOUT_MS: not a setting/);
    // A level that drops WARN lines would silence the log-based alarms.
    for (const level of ['ERROR', 'SILENT'])
      expect(() => synth('dev', { LOG_LEVEL: level })).toThrow(/-c LOG_LEVEL=.*the alarms read/);
    expect(() => synth('dev', { stages: { dev: { partnr: 'sandbox' } } })).toThrow(
      /cdk.json's context.stages.dev: unknown value partnr/,
    );
    expect(() => synth('dev', { stages: { dev: 'paystack' } })).toThrow(/must be an object/);
  });

  it('fans new events out from the events stream (INSERT only) and keeps the master webhook key in prod', () => {
    dev.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      StartingPosition: 'TRIM_HORIZON',
      // Ten batches of a shard at once, each merchant's events (the partition key) still in order.
      ParallelizationFactor: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      FilterCriteria: { Filters: [{ Pattern: JSON.stringify({ eventName: ['INSERT'] }) }] },
      BisectBatchOnFunctionError: true,
      // What the stream gives up after 23 hours of failures is described in a queue of its own.
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('fanouteventsgivenup'), 'Arn'] } },
      },
    });
    // A failing record is retried without a cap on attempts, and given up (and described) an hour
    // before the stream would drop it unreported.
    const [, mapping] = ofType(dev.resources, 'AWS::Lambda::EventSourceMapping').find(
      ([, r]) => r.Properties.StartingPosition === 'TRIM_HORIZON',
    ) as [string, Resource];
    expect([undefined, -1]).toContain(mapping.Properties.MaximumRetryAttempts);
    expect(mapping.Properties.MaximumRecordAgeInSeconds).toBe(23 * 3600);
    dev.template.hasResourceProperties('AWS::SQS::Queue', { QueueName: 'naira-dev-fan-out-events-given-up' });
    dev.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'IteratorAge',
      Statistic: 'Maximum',
      Threshold: 5 * 60_000,
    });
    dev.template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      TableName: 'naira-dev-events',
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
    });
    const key = ofType(prod.resources, 'AWS::SecretsManager::Secret').find(
      ([, r]) => r.Properties.Name === 'naira/prod/merchant-webhook-key',
    );
    expect(key?.[1]).toMatchObject({ DeletionPolicy: 'Retain' });
  });

  it('requeries pending transfers every minute from an EventBridge schedule, with only what settling needs', () => {
    dev.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      Targets: [
        Match.objectLike({ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('Fnrequerytransfers'), 'Arn'] } }),
      ],
    });
    // Neither EventBridge nor Lambda's asynchronous invocation runs a failed round again: rounds
    // never overlap, and the next one is a minute away.
    dev.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: functionId(dev, 'requery-transfers') },
      MaximumRetryAttempts: 0,
    });
    const policies = ofType(dev.resources, 'AWS::IAM::Policy').filter(([id]) =>
      id.startsWith('Fnrequerytransfers'),
    );
    const granted = JSON.stringify(policies.map(([, r]) => r.Properties));
    for (const table of ['merchants', 'ledgerentries', 'transactions'])
      expect(granted).toContain(`Table${table}`);
    for (const table of ['apikeys', 'virtualaccounts', 'payments', 'beneficiaries'])
      expect(granted).not.toContain(`Table${table}`);
    expect(granted).not.toContain('sqs:');
  });

  it('with -c partner=paystack: a Paystack key secret, read only by the functions that call Paystack', () => {
    const paystack = synth('dev', { partner: 'paystack', paystackWebhookIps: 'none' });
    paystack.template.hasResourceProperties('AWS::SecretsManager::Secret', {
      Name: 'naira/dev/paystack-secret-key',
    });
    const functions = serviceFunctions(paystack.resources).map(([, r]) => r.Properties);
    const withKey = functions
      .filter(
        (f) => (f.Environment as { Variables: Record<string, unknown> }).Variables.PAYSTACK_SECRET_KEY_ARN,
      )
      .map((f) => String(f.FunctionName).replace('naira-dev-', ''))
      .sort();
    expect(withKey).toEqual(
      [
        ...ROUTES.filter((r) => 'callsPartner' in r.access && r.access.callsPartner).map((r) => r.name),
        'requery-transfers',
      ].sort(),
    );
    for (const fn of functions) {
      const variables = (fn.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.PARTNER).toBe('paystack');
      // `none`: no allowlist.
      if ('PAYSTACK_WEBHOOK_IPS' in variables) expect(variables.PAYSTACK_WEBHOOK_IPS).toBe('');
    }
    expect(JSON.stringify(dev.resources)).not.toContain('paystack-secret-key');
  });

  it('gives a partner-calling route until just before API Gateway’s 29 s, the others 10 s', () => {
    const timeouts = new Map(
      serviceFunctions(dev.resources).map(([, r]) => [
        String(r.Properties.FunctionName).replace('naira-dev-', ''),
        r.Properties.Timeout,
      ]),
    );
    for (const route of ROUTES.filter((candidate) => timeouts.has(candidate.name))) {
      const callsPartner = 'callsPartner' in route.access && route.access.callsPartner;
      expect(timeouts.get(route.name), route.name).toBe(callsPartner ? 28 : 10);
    }
    expect(timeouts.get('create-transfer')).toBe(28);
  });

  it('makes every table on demand with point-in-time recovery and its TTL, named by stage', () => {
    const tables = ofType(dev.resources, 'AWS::DynamoDB::GlobalTable').map(([, r]) => r.Properties);
    expect(tables.map((t) => t.TableName).sort()).toEqual(
      TABLE_LIST.map((t) => `naira-dev-${t.name}`).sort(),
    );
    for (const table of tables) {
      expect(table.BillingMode).toBe('PAY_PER_REQUEST');
      expect((table.Replicas as Record<string, unknown>[])[0]).toMatchObject({
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        DeletionProtectionEnabled: false,
      });
      const definition = TABLE_LIST.find((t) => `naira-dev-${t.name}` === table.TableName);
      if (definition?.ttlAttribute) {
        expect(table.TimeToLiveSpecification).toEqual({
          AttributeName: definition.ttlAttribute,
          Enabled: true,
        });
      } else {
        expect(table.TimeToLiveSpecification).toBeUndefined();
      }
    }
  });

  it('protects and retains every table in prod, the money tables included', () => {
    for (const [, resource] of ofType(prod.resources, 'AWS::DynamoDB::GlobalTable')) {
      const definition = TABLE_LIST.find((t) => `naira-prod-${t.name}` === resource.Properties.TableName);
      expect((resource.Properties.Replicas as Record<string, unknown>[])[0]).toMatchObject({
        DeletionProtectionEnabled: true,
      });
      if (definition?.money)
        expect((resource as unknown as { DeletionPolicy: string }).DeletionPolicy).toBe('Retain');
    }
  });

  it('in prod: retains the key pepper and the partner webhook secret, and protects the stack from deletion', () => {
    for (const name of ['api-key-pepper', 'partner-webhook-secret', 'merchant-webhook-key']) {
      const find = (built: typeof prod, stage: string) =>
        ofType(built.resources, 'AWS::SecretsManager::Secret').find(
          ([, r]) => r.Properties.Name === `naira/${stage}/${name}`,
        )?.[1] as unknown as { DeletionPolicy?: string };
      expect(find(prod, 'prod').DeletionPolicy, name).toBe('Retain');
      expect(find(dev, 'dev').DeletionPolicy, name).toBe('Delete');
    }
    expect(prod.stack.terminationProtection).toBe(true);
    expect(dev.stack.terminationProtection).toBe(false);
  });

  it("retains API Gateway's account-level logging role, so deleting one stage never breaks another's logs", () => {
    for (const built of [dev, prod]) {
      const [[accountId, account]] = ofType(built.resources, 'AWS::ApiGateway::Account') as [
        [string, Resource & { DeletionPolicy?: string }],
      ];
      expect(accountId).toBeDefined();
      expect(account.DeletionPolicy).toBe('Retain');
      const roleId = (account.Properties.CloudWatchRoleArn as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
      const role = built.resources[roleId as string] as Resource & { DeletionPolicy?: string };
      expect(role.Type).toBe('AWS::IAM::Role');
      expect(role.DeletionPolicy).toBe('Retain');
      // Named by CloudFormation (never a fixed name two stages would both claim).
      expect(role.Properties.RoleName).toBeUndefined();
    }
  });

  it("keeps every log group for the stage's time and deletes it with the stage, the stage execution log (which API Gateway would make, kept forever) and the dashboard copier's included", () => {
    for (const built of [dev, prod]) {
      const groups = ofType(built.resources, 'AWS::Logs::LogGroup') as [
        string,
        Resource & { DeletionPolicy?: string },
      ][];
      expect(groups.length).toBeGreaterThan(0);
      for (const [id, group] of groups) {
        expect(group.Properties.RetentionInDays, id).toBe(built === dev ? 30 : 365);
        expect(group.DeletionPolicy, id).toBe('Delete');
      }
      const [[apiId]] = ofType(built.resources, 'AWS::ApiGateway::RestApi') as [[string, Resource]];
      const stageName = built === dev ? 'dev' : 'prod';
      const execution = groups.filter(([, group]) =>
        JSON.stringify(group.Properties.LogGroupName ?? '').includes('API-Gateway-Execution-Logs_'),
      );
      expect(execution).toHaveLength(1);
      const [[executionId, executionGroup]] = execution as [[string, Resource]];
      // The name API Gateway writes to: API-Gateway-Execution-Logs_<rest api id>/<stage>.
      expect(executionGroup.Properties.LogGroupName).toEqual({
        'Fn::Join': ['', ['API-Gateway-Execution-Logs_', { Ref: apiId }, `/${stageName}`]],
      });
      // Made before the stage, so API Gateway never makes it first.
      const [[, stage]] = ofType(built.resources, 'AWS::ApiGateway::Stage') as [
        [string, Resource & { DependsOn?: string[] }],
      ];
      expect(stage.DependsOn).toContain(executionId);
    }
  });

  it('keeps secrets out of the template: functions get Secrets Manager ARNs, never values', () => {
    const functions = serviceFunctions(dev.resources).map(([, r]) => r.Properties);
    const variables = functions.map(
      (f) => (f.Environment as { Variables: Record<string, unknown> }).Variables,
    );
    for (const vars of variables) {
      expect(vars.API_KEY_PEPPER).toBeUndefined();
      expect(vars.PARTNER_WEBHOOK_SECRET).toBeUndefined();
    }
    // Only the authorizer verifies secrets, and only the dashboard's create and roll make them: no
    // merchant handler, nor the revoke, carries the pepper.
    const withPepper = functions.filter(
      (f) => (f.Environment as { Variables: Record<string, unknown> }).Variables.API_KEY_PEPPER_SECRET,
    );
    expect(withPepper.map((f) => String(f.FunctionName).replace('naira-dev-', '')).sort()).toEqual(
      [API_KEY_AUTHORIZER.name, 'create-api-key', 'roll-api-key'].sort(),
    );
    expect(variables.filter((v) => v.PARTNER_WEBHOOK_SECRET_ARN)).toHaveLength(1);
  });
});

describe('least privilege', () => {
  const WRITES = [
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:BatchWriteItem',
  ];

  /** For one function: the DynamoDB actions its role may take, per table logical id. */
  function grantsOf(functionName: string): Map<string, Set<string>> {
    const { resources } = dev;
    const [, fn] = ofType(resources, 'AWS::Lambda::Function').find(
      ([, r]) => r.Properties.FunctionName === functionName,
    ) as [string, Resource];
    const role = (fn.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
    const grants = new Map<string, Set<string>>();
    for (const [, policy] of ofType(resources, 'AWS::IAM::Policy')) {
      if (!(policy.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role)) continue;
      const statements = (
        policy.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }
      ).Statement;
      for (const statement of statements) {
        const actions = [statement.Action].flat().filter((a) => a.startsWith('dynamodb:'));
        for (const table of JSON.stringify(statement.Resource).match(
          /Table[A-Za-z0-9]+(?=\.Arn|",\s*"Arn")/g,
        ) ?? []) {
          const set = grants.get(table) ?? new Set();
          for (const action of actions) set.add(action);
          grants.set(table, set);
        }
      }
    }
    return grants;
  }

  const tableId = (name: string) => {
    const table = dev.stack.tables.get(name as keyof typeof TABLES);
    return dev.stack.getLogicalId(table?.node.defaultChild as never);
  };

  it('lets only money-moving functions write the ledger tables', () => {
    const ledger = new Set(LEDGER_TABLES.map(tableId));
    const writers = [...new Set(ROUTES.map(functionOf)), PAYMENT_EVENTS_QUEUE.consumer].filter((name) =>
      [...grantsOf(`naira-dev-${name}`)].some(
        ([table, actions]) => ledger.has(table) && WRITES.some((w) => actions.has(w)),
      ),
    );
    expect(writers.sort()).toEqual(['create-transfer', PAYMENT_EVENTS_QUEUE.consumer].sort());
  });

  const allFunctions = () =>
    serviceFunctions(dev.resources).map(([, r]) => String(r.Properties.FunctionName));

  it('grants no function DeleteItem, BatchWriteItem or Scan on any table: never on the ledger, never Scan on the key hashes', () => {
    const ledger = new Set(LEDGER_TABLES.map(tableId));
    const apiKeys = tableId('apiKeys');
    const seen = new Set<string>();
    const checked = new Set<string>();
    for (const name of allFunctions()) {
      for (const [table, actions] of grantsOf(name)) {
        for (const action of actions) seen.add(action);
        for (const action of ['dynamodb:DeleteItem', 'dynamodb:BatchWriteItem', 'dynamodb:Scan'])
          expect(actions.has(action), `${name}: ${action} on ${table}`).toBe(false);
        if (ledger.has(table) || table === apiKeys) checked.add(table);
      }
    }
    // The ledger tables and the key table were among those checked (the loop above is not vacuous).
    expect(checked).toEqual(new Set([...ledger, apiKeys]));
    expect([...seen].sort()).toEqual(
      [
        'dynamodb:BatchGetItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
      ].sort(),
    );
  });

  it('grants BatchGetItem only to the webhook deliveries, on the three tables an attempt reads', () => {
    const batchReaders = allFunctions().flatMap((name) =>
      [...grantsOf(name)]
        .filter(([, actions]) => actions.has('dynamodb:BatchGetItem'))
        .map(([table]) => `${name} ${table}`),
    );
    expect(batchReaders.sort()).toEqual(
      (['webhookDeliveries', 'events', 'webhookEndpoints'] as const)
        .map((table) => `naira-dev-deliver-webhooks ${tableId(table)}`)
        .sort(),
    );
  });

  it('grants every DynamoDB call the code makes: the sources send only what the grants allow', () => {
    const granted = new Set<string>([...READ_ACTIONS, ...WRITE_ACTIONS, ...BATCH_READ_ACTIONS]);
    const actionOf: Record<string, string> = {
      GetCommand: 'dynamodb:GetItem',
      QueryCommand: 'dynamodb:Query',
      PutCommand: 'dynamodb:PutItem',
      UpdateCommand: 'dynamodb:UpdateItem',
      DeleteCommand: 'dynamodb:DeleteItem',
      ScanCommand: 'dynamodb:Scan',
      BatchGetCommand: 'dynamodb:BatchGetItem',
      BatchWriteCommand: 'dynamodb:BatchWriteItem',
      TransactGetCommand: 'dynamodb:GetItem',
      // Not DynamoDB: the dashboard's key routes find the usage plan (their own grant, tested in dashboard-stack).
      GetUsagePlansCommand: '',
      // API Gateway's key calls of the usage-plan registry (their own grant, tested in dashboard-stack).
      GetApiKeysCommand: '',
      UpdateApiKeyCommand: '',
      // Not DynamoDB: reading a secret (shared/secrets.ts; each secret's readers are tested above).
      GetSecretValueCommand: '',
      // A transaction needs each of its items' actions (below), nothing of its own.
      TransactWriteCommand: '',
    };
    const used = new Map<string, string>();
    // What the functions can run: every module their handler files import, transitively (operator
    // tools in shared/ that only the CLIs import run with the operator's own credentials).
    const sources = new Set(
      readdirSync(path.join(PROJECT_ROOT, 'functions'))
        .filter((file) => file.endsWith('.ts'))
        .map((file) => path.join('functions', file)),
    );
    for (const file of sources) {
      const source = readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
      for (const [, imported = ''] of source.matchAll(/['"]#shared\/([\w/.-]+\.ts)['"]/g))
        sources.add(path.join('shared', imported));
    }
    for (const file of sources) {
      const source = readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
      for (const [, command = ''] of source.matchAll(/new (\w+Command)\(/g)) {
        const action = actionOf[command];
        if (action) used.set(action, file);
        else if (action === undefined && /^(Get|Query|Put|Update|Delete|Scan|Batch|Transact)/.test(command))
          throw new Error(`${file}: ${command} is not mapped to an IAM action in this test`);
      }
      // Items of a TransactWriteCommand: `Put: {`, `Update: {`, `Delete: {`, `ConditionCheck: {`.
      for (const [, item = ''] of source.matchAll(/\b(Put|Update|Delete|ConditionCheck): \{/g))
        used.set(
          item === 'ConditionCheck' ? 'dynamodb:ConditionCheckItem' : (actionOf[`${item}Command`] ?? ''),
          file,
        );
    }
    expect([...used.keys()].sort()).toEqual([...granted].sort());
    for (const [action, file] of used) expect(granted.has(action), `${file} calls ${action}`).toBe(true);
  });

  it('gives read-only endpoints no write and no access to the key table at all', () => {
    const apiKeys = tableId('apiKeys');
    for (const name of [
      'get-balance',
      'list-beneficiaries',
      'list-transactions',
      'get-transaction',
      'get-payment',
    ]) {
      for (const [table, actions] of grantsOf(`naira-dev-${name}`)) {
        const writes = WRITES.filter((w) => actions.has(w));
        expect(writes, `${name} on ${table}`).toEqual([]);
      }
    }
    // The key table: only the authorizer and the dashboard's key routes (which never verify secrets).
    const keyRoutes = new Set([
      'list-api-keys',
      'create-api-key',
      'roll-api-key',
      'revoke-api-key',
      'set-api-key-ips',
    ]);
    for (const name of new Set(ROUTES.map(functionOf)))
      expect(grantsOf(`naira-dev-${name}`).has(apiKeys), name).toBe(keyRoutes.has(name));
    for (const [table, actions] of grantsOf('naira-dev-list-api-keys')) {
      expect(
        WRITES.filter((w) => actions.has(w)),
        `list-api-keys on ${table}`,
      ).toEqual([]);
    }
    // GET /banks counts its client IP's requests with the failed attempts, and touches nothing else.
    const banks = grantsOf('naira-dev-list-banks');
    expect([...banks.keys()]).toEqual([tableId('clientIpLimits')]);
    expect([...(banks.get(tableId('clientIpLimits')) ?? [])].sort()).toEqual([
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
  });

  it('lets the authorizer read keys, record their last use and count failures per IP, and nothing else', () => {
    const grants = grantsOf('naira-dev-authorize-api-key');
    expect([...grants.keys()].sort()).toEqual([tableId('apiKeys'), tableId('clientIpLimits')].sort());
    expect([...(grants.get(tableId('apiKeys')) ?? [])].sort()).toEqual([
      'dynamodb:GetItem',
      'dynamodb:UpdateItem',
    ]);
    expect([...(grants.get(tableId('clientIpLimits')) ?? [])].sort()).toEqual([
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
  });
});
