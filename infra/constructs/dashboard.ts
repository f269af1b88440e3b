import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Annotations, Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  AccessLevel,
  AllowedMethods,
  CachePolicy,
  Function as CloudFrontFunction,
  Distribution,
  FunctionCode,
  FunctionEventType,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  OriginRequestPolicy,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { RestApiOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import {
  AccountRecovery,
  ClientAttributes,
  Mfa,
  StringAttribute,
  UserPool,
  type UserPoolClient,
} from 'aws-cdk-lib/aws-cognito';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { DISABLE_ASSET_STAGING_CONTEXT } from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { buildDashboardSync, DASHBOARD_CSP } from '#infra/dashboard/build.ts';
import { DASHBOARD_USER_POOL } from '#shared/dashboard/user-pool.ts';
import { DASHBOARD_PREFIX } from '#shared/definitions/routes.ts';

/**
 * The dashboard's users (API.md §10): a Cognito user pool where only the operator creates users
 * (`npm run keys -- invite`), sign-in by email and a strong password, TOTP available, and the
 * merchant as an immutable attribute the app client cannot write.
 */
export class DashboardUsers extends Construct {
  readonly pool: UserPool;
  readonly client: UserPoolClient;

  constructor(scope: Construct, id: string, props: { stage: string; prod: boolean }) {
    super(scope, id);
    const policy = DASHBOARD_USER_POOL.passwordPolicy;
    this.pool = new UserPool(this, 'Pool', {
      userPoolName: `naira-${props.stage}-dashboard`,
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      signInCaseSensitive: false,
      autoVerify: { email: true },
      passwordPolicy: {
        minLength: policy.MinimumLength,
        requireUppercase: policy.RequireUppercase,
        requireLowercase: policy.RequireLowercase,
        requireDigits: policy.RequireNumbers,
        requireSymbols: policy.RequireSymbols,
        tempPasswordValidity: Duration.days(policy.TemporaryPasswordValidityDays),
      },
      mfa: Mfa.OPTIONAL,
      mfaSecondFactor: { otp: true, sms: false },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      customAttributes: {
        [DASHBOARD_USER_POOL.merchantAttribute]: new StringAttribute({
          mutable: false,
          minLen: 1,
          maxLen: 64,
        }),
      },
      userInvitation: {
        emailSubject: 'Your NairaPay dashboard account',
        emailBody:
          'You have been invited to the NairaPay developer dashboard. Sign in with the email {username} and the temporary password {####}; you will choose your own password.',
      },
      deletionProtection: props.prod,
      removalPolicy: props.prod ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    // Users may change nothing that decides what they see: the merchant attribute is read-only.
    this.client = this.pool.addClient('Dashboard', {
      userPoolClientName: DASHBOARD_USER_POOL.clientName,
      generateSecret: false,
      authFlows: { userPassword: true },
      // Sign-in is the API's password flow only: no hosted UI, no OAuth flows (CDK's default would
      // allow the implicit flow to a placeholder callback, live the day a domain is added).
      disableOAuth: true,
      idTokenValidity: Duration.minutes(DASHBOARD_USER_POOL.tokenValidityMinutes),
      accessTokenValidity: Duration.minutes(DASHBOARD_USER_POOL.tokenValidityMinutes),
      preventUserExistenceErrors: true,
      readAttributes: new ClientAttributes()
        .withStandardAttributes({ email: true, emailVerified: true })
        .withCustomAttributes(DASHBOARD_USER_POOL.merchantAttribute),
      writeAttributes: new ClientAttributes().withStandardAttributes(
        Object.fromEntries(DASHBOARD_USER_POOL.writableAttributes.map((name) => [name, true])),
      ),
    });
  }
}

/** The viewer-request function of the app's behaviour: `/` and `/dashboard` lead to the app's page. */
const ROUTING = `function handler(event) {
  var uri = event.request.uri;
  if (uri === '/' || uri === '/dashboard') {
    return { statusCode: 301, statusDescription: 'Moved Permanently', headers: { location: { value: '/dashboard/' } } };
  }
  if (uri === '/dashboard/') event.request.uri = '/dashboard/index.html';
  return event.request;
}`;

/**
 * The dashboard's web app on AWS: its files in a private, encrypted, TLS-only bucket, read by
 * CloudFront alone (origin access control); the same distribution forwards the dashboard's API
 * (`/api/v1/dashboard/*`) to the REST API uncached, so the app and its API share one origin and the
 * CSP's `connect-src 'self'` holds. Every answer carries the app's CSP and security headers.
 */
export class DashboardSite extends Construct {
  readonly distribution: Distribution;
  readonly bucket: Bucket;
  readonly url: string;

  constructor(
    scope: Construct,
    id: string,
    props: { stage: string; api: RestApi; logRetention: RetentionDays },
  ) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Files', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      // The files are rebuilt from the repository on every deploy: nothing to keep.
      removalPolicy: RemovalPolicy.DESTROY,
      autoDeleteObjects: false,
    });
    const headers = new ResponseHeadersPolicy(this, 'SecurityHeaders', {
      responseHeadersPolicyName: `naira-${props.stage}-dashboard`,
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: DASHBOARD_CSP, override: true },
        strictTransportSecurity: {
          accessControlMaxAge: Duration.days(365),
          includeSubdomains: true,
          override: true,
        },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
      },
    });
    const routing = new CloudFrontFunction(this, 'Routing', {
      code: FunctionCode.fromInline(ROUTING),
      comment: 'Sends / and /dashboard to the dashboard page',
    });
    this.distribution = new Distribution(this, 'Distribution', {
      comment: `naira-${props.stage} developer dashboard`,
      // Never reached while the routing function redirects `/`; were it ever not, the root would be
      // the app's page, not the bucket's listing (the origin may list, below).
      defaultRootObject: 'dashboard/index.html',
      defaultBehavior: {
        // LIST as well as READ: without s3:ListBucket, S3 answers a missing file with 403 (it may not
        // say whether the key exists), so a mistyped dashboard address read as "forbidden". A listing
        // is a GET of the bucket's root, which the routing function always redirects (and, behind it,
        // the default root object answers).
        origin: S3BucketOrigin.withOriginAccessControl(this.bucket, {
          originAccessLevels: [AccessLevel.READ, AccessLevel.LIST],
        }),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        responseHeadersPolicy: headers,
        functionAssociations: [{ function: routing, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
      additionalBehaviors: {
        // The dashboard's API, never cached: with caching disabled, the AllViewerExceptHostHeader
        // origin request policy forwards the Authorization header, body and query string.
        [`${DASHBOARD_PREFIX.slice(1)}/*`]: {
          origin: new RestApiOrigin(props.api),
          viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
          allowedMethods: AllowedMethods.ALLOW_ALL,
          cachePolicy: CachePolicy.CACHING_DISABLED,
          originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
          responseHeadersPolicy: headers,
        },
      },
    });
    Annotations.of(this.distribution).acknowledgeWarning(
      '@aws-cdk/aws-cloudfront-origins:listBucketSecurityRisk',
      'The routing function redirects the root, and the default root object is the app page: no request lists the bucket.',
    );
    // Built at synth, offline, by the same esbuild build `npm start` serves.
    const built = mkdtempSync(path.join(tmpdir(), 'naira-dashboard-'));
    buildDashboardSync(built);
    new BucketDeployment(this, 'Deploy', {
      sources: [Source.asset(built)],
      destinationBucket: this.bucket,
      destinationKeyPrefix: 'dashboard/',
      distribution: this.distribution,
      distributionPaths: ['/dashboard/*'],
      // Deleting the stack deletes the files too: the bucket (removal policy DESTROY) must be empty.
      retainOnDelete: false,
      // Its copying function's logs, kept and deleted as every function's (by default: two years,
      // and left behind when the stage is deleted).
      logGroup: new LogGroup(this, 'DeployLogs', {
        logGroupName: `/aws/lambda/naira-${props.stage}-dashboard-deploy`,
        retention: props.logRetention,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
    });
    // The asset is copied into the cloud assembly as the deployment binds it, so the folder can go
    // (every synth, the CLI's and each test's, left one behind). Not when staging is off (SAM's
    // local tools): the template then names the folder itself.
    if (!this.node.tryGetContext(DISABLE_ASSET_STAGING_CONTEXT)) {
      rmSync(built, { recursive: true, force: true });
    }
    this.url = `https://${this.distribution.distributionDomainName}/dashboard/`;
  }
}
