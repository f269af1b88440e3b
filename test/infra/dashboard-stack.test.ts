import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { Template as Templates } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP } from '#infra/dashboard/build.ts';
import { buildPaymentsApp } from '#infra/payments-app.ts';
import { DASHBOARD_USER_POOL } from '#shared/dashboard/user-pool.ts';
import { DASHBOARD_PREFIX, ROUTES, type Route, servedPaths } from '#shared/definitions/routes.ts';
import { PROJECT_ROOT } from '#test/support/gateway.ts';

type Resource = { Type: string; Properties: Record<string, unknown> };
let outdir: string;
let template: Template;
let resources: Record<string, Resource>;
/** What the synth left in its temporary folder (TMPDIR pointed at one of its own). */
let leftInTmp: string[];
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const only = (type: string) => {
  const found = ofType(type);
  expect(found, type).toHaveLength(1);
  return found[0] as [string, Resource];
};

beforeAll(() => {
  const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  };
  outdir = mkdtempSync(path.join(tmpdir(), 'cdk-dashboard-'));
  const ownTmp = mkdtempSync(path.join(tmpdir(), 'cdk-dashboard-tmp-'));
  const app = new App({
    outdir,
    context: { ...cdkJson.context, stage: 'dev', 'aws:cdk:bundling-stacks': [] },
  });
  const tmp = process.env.TMPDIR;
  process.env.TMPDIR = ownTmp;
  let stack: ReturnType<typeof buildPaymentsApp>;
  try {
    stack = buildPaymentsApp(app);
    app.synth();
  } finally {
    process.env.TMPDIR = tmp;
  }
  leftInTmp = readdirSync(ownTmp);
  rmSync(ownTmp, { recursive: true, force: true });
  template = Templates.fromStack(stack);
  resources = template.toJSON().Resources as Record<string, Resource>;
});
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe("the dashboard's AWS side (API.md §10)", () => {
  it('stays within CloudFormation’s 500 resources, with room to grow', () => {
    // 469 here at 2cb5048 (the CLI counts one more, CDK's metadata; prod with Paystack one more
    // again): past 480, the dashboard's resources move to a nested stack (README, Deploy to AWS).
    expect(Object.keys(resources).length).toBeLessThanOrEqual(480);
  });

  it('deploys the built site from the cloud assembly, with its licences, and leaves no build folder behind', () => {
    const sites = readdirSync(outdir).filter((name) => existsSync(path.join(outdir, name, 'index.html')));
    expect(sites).toHaveLength(1);
    const site = path.join(outdir, sites[0] ?? '');
    expect(readdirSync(site).sort()).toEqual(['app.css', 'app.js', 'index.html', 'licenses.txt']);
    // What the bundle holds goes with its licence notice, named by the bundle's first line.
    expect(readFileSync(path.join(site, 'app.js'), 'utf8')).toMatch(
      /^\/\*! Third-party licences: licenses\.txt \*\//,
    );
    const licences = readFileSync(path.join(site, 'licenses.txt'), 'utf8');
    for (const bundled of ['preact', 'lean-qr']) {
      expect(licences).toMatch(new RegExp(`^${bundled} \\d+\\.\\d+\\.\\d+ \\(MIT\\)$`, 'm'));
    }
    expect(licences.match(/Permission is hereby granted/g)).toHaveLength(2);
    expect(leftInTmp).toEqual([]);
  });

  it('signs users in with a Cognito pool: invite only, a strong password, TOTP available, the merchant immutable', () => {
    const [, pool] = only('AWS::Cognito::UserPool');
    const policy = DASHBOARD_USER_POOL.passwordPolicy;
    expect(pool.Properties).toMatchObject({
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      UsernameAttributes: ['email'],
      MfaConfiguration: 'OPTIONAL',
      EnabledMfas: ['SOFTWARE_TOKEN_MFA'],
      Policies: {
        PasswordPolicy: {
          MinimumLength: policy.MinimumLength,
          RequireUppercase: true,
          RequireLowercase: true,
          RequireNumbers: true,
          RequireSymbols: true,
        },
      },
    });
    expect(policy.MinimumLength).toBeGreaterThanOrEqual(12);
    expect(pool.Properties.Schema).toContainEqual(
      expect.objectContaining({ Name: DASHBOARD_USER_POOL.merchantAttribute, Mutable: false }),
    );
    const [, client] = only('AWS::Cognito::UserPoolClient');
    expect(client.Properties).toMatchObject({
      GenerateSecret: false,
      ExplicitAuthFlows: expect.arrayContaining(['ALLOW_USER_PASSWORD_AUTH']),
      PreventUserExistenceErrors: 'ENABLED',
    });
    // No OAuth: no flow could hand tokens to a callback URL.
    expect(client.Properties.AllowedOAuthFlows).toBeUndefined();
    expect(client.Properties.CallbackURLs).toBeUndefined();
    expect(client.Properties.AllowedOAuthFlowsUserPoolClient).not.toBe(true);
    // Users can never change which merchant they see, nor their sign-in email: the write list is
    // given (an empty or absent one lets users write every standard attribute) and holds neither.
    expect(client.Properties.WriteAttributes).toEqual([...DASHBOARD_USER_POOL.writableAttributes]);
    expect(DASHBOARD_USER_POOL.writableAttributes).not.toContain('email');
    expect(JSON.stringify(client.Properties.WriteAttributes)).not.toContain('custom:');
    expect(client.Properties.ReadAttributes).toContain(`custom:${DASHBOARD_USER_POOL.merchantAttribute}`);
  });

  it('puts every session route behind the Cognito authorizer, without an API key; sign-in is public', () => {
    const [authorizerId, authorizer] = ofType('AWS::ApiGateway::Authorizer').find(
      ([, a]) => a.Properties.Type === 'COGNITO_USER_POOLS',
    ) as [string, Resource];
    expect(authorizer.Properties.IdentitySource).toBe('method.request.header.Authorization');
    expect(JSON.stringify(authorizer.Properties.ProviderARNs)).toContain('DashboardUsersPool');
    const paths = new Map<string, string>();
    const pathOf = (id: string): string => {
      const cached = paths.get(id);
      if (cached !== undefined) return cached;
      const resource = resources[id] as Resource;
      const parent = resource.Properties.ParentId as { Ref?: string };
      const full = `${parent.Ref ? pathOf(parent.Ref) : ''}/${resource.Properties.PathPart}`;
      paths.set(id, full);
      return full;
    };
    const methods = ofType('AWS::ApiGateway::Method').map(([, m]) => m.Properties);
    const methodAt = (method: string, at: string) =>
      methods.find((m) => m.HttpMethod === method && pathOf((m.ResourceId as { Ref: string }).Ref) === at);
    const dashboardRoutes = (ROUTES as readonly Route[]).filter((route) => route.dashboard);
    expect(dashboardRoutes.filter((r) => r.auth === 'session').length).toBeGreaterThan(10);
    for (const route of dashboardRoutes) {
      for (const at of servedPaths(route)) {
        expect(at.startsWith(`${DASHBOARD_PREFIX}/`)).toBe(true);
        const method = methodAt(route.method, at);
        expect(method, `${route.method} ${at}`).toBeDefined();
        expect(method?.ApiKeyRequired ?? false).toBe(false);
        if (route.auth === 'session') {
          expect(method).toMatchObject({
            AuthorizationType: 'COGNITO_USER_POOLS',
            AuthorizerId: { Ref: authorizerId },
          });
        } else {
          expect(method?.AuthorizationType ?? 'NONE').toBe('NONE');
        }
      }
    }
  });

  it('keeps the files in a private, encrypted, TLS-only bucket that only the distribution reads', () => {
    const [bucketId, bucket] = only('AWS::S3::Bucket');
    expect(bucket.Properties).toMatchObject({
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
    });
    const [, policy] = only('AWS::S3::BucketPolicy');
    expect(policy.Properties.Bucket).toEqual({ Ref: bucketId });
    const statements = (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] })
      .Statement;
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Principal: { AWS: '*' },
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    );
    const allows = statements.filter((statement) => statement.Effect === 'Allow');
    expect(allows).toHaveLength(1);
    // ListBucket beside GetObject makes S3 answer a missing file 404 rather than 403.
    expect(allows[0]).toMatchObject({
      Action: ['s3:GetObject', 's3:ListBucket'],
      Principal: { Service: 'cloudfront.amazonaws.com' },
    });
    expect(JSON.stringify(allows[0]?.Condition)).toContain('AWS:SourceArn');
  });

  it('serves the app through CloudFront with origin access control, HTTPS, the CSP, and the API uncached', () => {
    const [, distribution] = only('AWS::CloudFront::Distribution');
    const config = distribution.Properties.DistributionConfig as Record<string, unknown>;
    const origins = config.Origins as Record<string, unknown>[];
    const s3 = origins.find((origin) => origin.S3OriginConfig) as Record<string, unknown>;
    expect(s3.OriginAccessControlId).toBeDefined();
    only('AWS::CloudFront::OriginAccessControl');
    const defaults = config.DefaultCacheBehavior as Record<string, unknown>;
    expect(defaults.ViewerProtocolPolicy).toBe('redirect-to-https');
    // The origin may list the bucket (a missing file is then 404): its root is never a listing.
    expect(config.DefaultRootObject).toBe('dashboard/index.html');
    // Deleting the stack deletes the files, or the bucket could not be deleted.
    const [, deployment] = only('Custom::CDKBucketDeployment');
    expect(deployment.Properties.RetainOnDelete).toBe(false);
    const api = (config.CacheBehaviors as Record<string, unknown>[]).find(
      (behavior) => behavior.PathPattern === `${DASHBOARD_PREFIX.slice(1)}/*`,
    );
    expect(api).toMatchObject({
      ViewerProtocolPolicy: 'redirect-to-https',
      // The managed CachingDisabled and AllViewerExceptHostHeader policies: the Authorization header reaches the API.
      CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
      OriginRequestPolicyId: 'b689b0a8-53d0-40ab-baf2-68738e2966ac',
      AllowedMethods: expect.arrayContaining(['POST', 'DELETE']),
    });
    const [headersId, headers] = only('AWS::CloudFront::ResponseHeadersPolicy');
    const security = (
      headers.Properties.ResponseHeadersPolicyConfig as Record<string, Record<string, unknown>>
    ).SecurityHeadersConfig;
    expect(security).toMatchObject({
      ContentSecurityPolicy: { ContentSecurityPolicy: DASHBOARD_CSP, Override: true },
      FrameOptions: { FrameOption: 'DENY' },
      ContentTypeOptions: { Override: true },
      ReferrerPolicy: { ReferrerPolicy: 'no-referrer' },
      StrictTransportSecurity: expect.objectContaining({ Override: true }),
    });
    expect(defaults.ResponseHeadersPolicyId).toEqual({ Ref: headersId });
    expect((api as Record<string, unknown>).ResponseHeadersPolicyId).toEqual({ Ref: headersId });
    template.hasOutput('DashboardUrl', {});
    expect(JSON.stringify(template.toJSON().Outputs.DashboardUrl.Value)).toContain('/dashboard/');
    template.hasResourceProperties('Custom::CDKBucketDeployment', {
      DestinationBucketKeyPrefix: 'dashboard/',
    });
  });

  it("lets the key routes find the stage's usage plan by name and register keys only in it", () => {
    const [, policy] = ofType('AWS::IAM::Policy').find(([id]) =>
      id.startsWith('DashboardKeyRegistration'),
    ) as [string, Resource];
    const statements = (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] })
      .Statement;
    expect(statements.map((statement) => statement.Action).sort()).toEqual(
      ['apigateway:DELETE', 'apigateway:GET', 'apigateway:POST'].sort(),
    );
    const get = JSON.stringify(
      statements.find((statement) => statement.Action === 'apigateway:GET')?.Resource,
    );
    expect(get).toContain('::/apikeys"');
    expect(get).toContain('::/usageplans"');
    const post = JSON.stringify(
      statements.find((statement) => statement.Action === 'apigateway:POST')?.Resource,
    );
    expect(post).toContain('/apikeys');
    expect(post).toMatch(/usageplans\/".*PerKeyLimit.*\/keys/);
    const roles = JSON.stringify(policy.Properties.Roles);
    for (const route of (ROUTES as readonly Route[]).filter((r) => r.access.managesKeys)) {
      expect(roles).toContain(`Fn${route.name.replace(/-/g, '')}`);
    }
    expect(roles).not.toContain('Fnlistapikeys');
  });

  it('has no dependency cycle (the key routes need the usage plan, which follows every method)', () => {
    const ids = new Set(Object.keys(resources));
    const dependencies = new Map<string, Set<string>>();
    for (const [id, resource] of Object.entries(resources)) {
      const found = new Set<string>([(resource as { DependsOn?: string[] }).DependsOn ?? []].flat());
      const text = JSON.stringify(resource.Properties ?? {});
      for (const [, ref = ''] of text.matchAll(/"Ref":"([^"]+)"/g)) found.add(ref);
      for (const [, att = ''] of text.matchAll(/"Fn::GetAtt":\["([^"]+)"/g)) found.add(att);
      dependencies.set(id, new Set([...found].filter((d) => ids.has(d))));
    }
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (id: string, trail: string[]): void => {
      if (state.get(id) === 'done') return;
      if (state.get(id) === 'visiting') throw new Error(`cycle: ${[...trail, id].join(' -> ')}`);
      state.set(id, 'visiting');
      for (const next of dependencies.get(id) ?? []) visit(next, [...trail, id]);
      state.set(id, 'done');
    };
    for (const id of ids) visit(id, []);
    expect(state.size).toBe(ids.size);
  });

  it('sends / and /dashboard to /dashboard/, which is index.html (the viewer-request function, run)', () => {
    const [, fn] = only('AWS::CloudFront::Function');
    const handler = new Function(`${fn.Properties.FunctionCode as string}; return handler;`)() as (event: {
      request: { uri: string };
    }) => { uri?: string; statusCode?: number; headers?: { location: { value: string } } };
    const at = (uri: string) => handler({ request: { uri } });
    for (const uri of ['/', '/dashboard'])
      expect(at(uri)).toMatchObject({ statusCode: 301, headers: { location: { value: '/dashboard/' } } });
    expect(at('/dashboard/')).toEqual({ uri: '/dashboard/index.html' });
    expect(at('/dashboard/app.js')).toEqual({ uri: '/dashboard/app.js' });
  });

  it('gives the sign-in functions the pool and its client', () => {
    const signers = (ROUTES as readonly Route[]).filter((route) => route.access.signsIn);
    // Named, not only counted: a route that lost the flag would leave this loop, and its function
    // would lose the pool on AWS only (locally every handler shares one environment).
    expect(signers.map((route) => route.name).sort()).toEqual([
      'answer-dashboard-challenge',
      'confirm-totp-enrolment',
      'create-dashboard-session',
      'start-totp-enrolment',
    ]);
    for (const route of signers) {
      const [, fn] = ofType('AWS::Lambda::Function').find(
        ([, r]) => r.Properties.FunctionName === `naira-dev-${route.name}`,
      ) as [string, Resource];
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(JSON.stringify(variables.USER_POOL_ID), route.name).toContain('DashboardUsersPool');
      expect(JSON.stringify(variables.USER_POOL_CLIENT_ID), route.name).toContain(
        'DashboardUsersPoolDashboard',
      );
    }
  });
});
