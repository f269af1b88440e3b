import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  ApiKeySourceType,
  AuthorizationType,
  CognitoUserPoolsAuthorizer,
  IdentitySource,
  type IResource,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  MockIntegration,
  PassthroughBehavior,
  RequestAuthorizer,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  ComparisonOperator,
  type IMetric,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { AttributeType, Billing, StreamViewType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Policy, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, FilterRule, FunctionUrlAuthType, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { FilterPattern, LogGroup, MetricFilter, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';
import { DashboardSite, DashboardUsers } from '#infra/constructs/dashboard.ts';
import { RATE_LIMITED_BODY, RequestsWithoutKeyPerIpLimit } from '#infra/constructs/public-limit.ts';
import { ServiceFunction } from '#infra/constructs/service-function.ts';
import { buildOpenApiDocument } from '#infra/openapi/document.ts';
import { operatorConfigParameter, usagePlanName } from '#infra/stack-names.ts';
import {
  AUTHORIZER_SECRET_GRANTS,
  AUTHORIZER_TABLE_GRANTS,
  secretGrants,
  tableGrants,
} from '#infra/table-grants.ts';
import { loadConfig } from '#shared/config-schema.ts';
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
  deadLetterQueueName,
  PAYMENT_EVENTS_QUEUE,
  QUEUES,
  type QueueDefinition,
  type QueueKey,
  visibilityTimeoutSeconds,
} from '#shared/definitions/queues.ts';
import {
  type Access,
  API_KEY_AUTHORIZER,
  functionOf,
  METHOD_NOT_ALLOWED_FUNCTION,
  OPENAPI_PATHS,
  RATE_LIMIT,
  REQUERY_ACCESS,
  REQUERY_TIMEOUT_SECONDS,
  ROUTES,
  type Route,
  type RouteAuth,
  servedPaths,
} from '#shared/definitions/routes.ts';
import {
  EVENTS_STREAM,
  givenUpQueueName,
  STREAM_GIVE_UP_AGE_SECONDS,
  STREAMS,
} from '#shared/definitions/streams.ts';
import { TABLE_LIST, TABLES, type TableName } from '#shared/definitions/tables.ts';
import { UNSUPPORTED_CODING } from '#shared/http/errors.ts';
import { FAILED_ITEMS_METRIC, METRICS_NAMESPACE } from '#shared/metrics.ts';
import type { PartnerName } from '#shared/partners/partner.ts';
import type { SecretName } from '#shared/secrets.ts';

/**
 * The secret each partner's adapter calls it with, made by the stack (the functions that call the
 * partner read it). One entry per name of `PARTNER_NAMES`: a partner added there does not compile
 * until its deploy is decided here (README, "Adding a partner"); the sandbox's calls carry none.
 */
const PARTNER_SECRETS: Record<PartnerName, { id: string; path: string; description: string } | undefined> = {
  sandbox: undefined,
  paystack: {
    id: 'PaystackSecretKey',
    path: 'paystack-secret-key',
    description: "Paystack's secret key (sk_live_…): every Paystack call and webhook signature uses it",
  },
};

export interface PaymentsStackProps extends StackProps {
  /** `dev` (default) or `prod`: names every resource; prod retains and protects money tables. */
  stage: string;
  projectRoot: string;
  /** The banking partner of this deployment (API.md §9). */
  partner: PartnerName;
  /** The sandbox partner's API (PARTNER=sandbox). */
  partnerBaseUrl: string;
  partnerBankCode: string;
  /** Paystack's API (PARTNER=paystack) and the addresses its webhooks come from (empty: not checked). */
  paystackBaseUrl: string;
  paystackWebhookIps: string;
  /** How often pending transfers are requeried (API.md §7); EventBridge takes whole minutes. */
  requeryIntervalMinutes: number;
  /**
   * Concurrency reserved for the payment events consumer (also its SQS pollers' maximum, so no
   * message is throttled towards the dead-letter queue); 0: none reserved.
   */
  paymentConsumerConcurrency: number;
  /** The most concurrent executions of the public partner webhook (reserved, so a cap); 0: no cap. */
  webhookConcurrency: number;
  /** Service settings given at deploy, by variable name: in every function's environment, checked with it. */
  settings?: Readonly<Record<string, string>>;
}

/** The header values of every gateway-made response: JSON, and the request id. */
const JSON_HEADERS = {
  'Content-Type': "'application/json; charset=utf-8'",
  'X-Content-Type-Options': "'nosniff'",
  'X-Request-Id': 'context.requestId',
};

/** A consumer function and where what it could not process ends up (for its alarms). */
interface ConsumerParts {
  fn: ServiceFunction;
  /** A queue consumer's dead-letter queue. */
  deadLetters?: Queue;
  /** A stream consumer's failure destination: what its stream gave up. */
  givenUp?: Queue;
}

/** Log levels that keep the WARN and ERROR lines the log-based alarms count. */
const ALARMED_LOG_LEVELS: readonly string[] = ['DEBUG', 'INFO', 'WARN'];

/**
 * The whole service on AWS: DynamoDB tables from `shared/definitions/tables.ts`, one Lambda per route of
 * `shared/definitions/routes.ts` behind a REST API (both paths), the per-key usage plan, the payment events
 * queue with its consumer, and the alarms that tell operators when money needs a look.
 */
export class PaymentsStack extends Stack {
  readonly api: RestApi;
  readonly functions = new Map<string, ServiceFunction>();
  /** The dashboard's web app (S3 and CloudFront). */
  readonly dashboard: DashboardSite;
  private readonly integrations = new Map<ServiceFunction, LambdaIntegration>();
  readonly tables = new Map<TableName, TableV2>();
  /** Where each table stream's event source mapping describes the batches it gave up. */
  readonly givenUpQueues: Queue[] = [];

  constructor(scope: Construct, id: string, props: PaymentsStackProps) {
    // Without indentation: the template holds the OpenAPI document twice (its two paths' mock
    // answers), and indented it passed 80% of CloudFormation's 1 MB (828 KB; 685 KB without).
    super(scope, id, { ...props, suppressTemplateIndentation: true });
    const { stage, projectRoot } = props;
    const prod = stage === 'prod';
    const prefix = `naira-${stage}-`;

    const tables = this.tables;
    for (const [key, definition] of Object.entries(TABLES) as [TableName, (typeof TABLES)[TableName]][]) {
      const table = new TableV2(this, `Table-${definition.name}`, {
        tableName: prefix + definition.name,
        partitionKey: {
          name: definition.partitionKey.name,
          type: AttributeType[definition.partitionKey.type === 'S' ? 'STRING' : 'NUMBER'],
        },
        sortKey:
          'sortKey' in definition && definition.sortKey
            ? {
                name: definition.sortKey.name,
                type: definition.sortKey.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER,
              }
            : undefined,
        billing: Billing.onDemand(),
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        timeToLiveAttribute: 'ttlAttribute' in definition ? definition.ttlAttribute : undefined,
        dynamoStream: 'stream' in definition && definition.stream ? StreamViewType.NEW_IMAGE : undefined,
        deletionProtection: prod,
        // Prod keeps every table (money, keys, beneficiaries) if the stack is ever deleted.
        removalPolicy: prod ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
        globalSecondaryIndexes: ('indexes' in definition ? definition.indexes : []).map((index) => ({
          indexName: index.name,
          partitionKey: {
            name: index.partitionKey.name,
            type: index.partitionKey.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER,
          },
          sortKey: index.sortKey
            ? {
                name: index.sortKey.name,
                type: index.sortKey.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER,
              }
            : undefined,
        })),
      });
      tables.set(key, table);
    }
    if (tables.size !== TABLE_LIST.length) throw new Error('every table definition must become a table');

    // The pepper is made here and never leaves Secrets Manager; the webhook secret is the partner's,
    // set by the operator after deploy (until then the webhook answers 5xx and the partner retries).
    // Prod keeps both if the stack is ever deleted: without the pepper no stored hash verifies.
    const pepper = new Secret(this, 'ApiKeyPepper', {
      secretName: `naira/${stage}/api-key-pepper`,
      description: 'Server-side pepper of API secret hashes (rotating it invalidates every key)',
      generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
      removalPolicy: prod ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    const webhookSecret = new Secret(this, 'PartnerWebhookSecret', {
      secretName: `naira/${stage}/partner-webhook-secret`,
      description: "The partner's webhook signing secret(s): whsec_<base64>, space-separated when rotating",
      generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
      removalPolicy: prod ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });

    const queues = new Map<QueueKey, { queue: Queue; deadLetters: Queue }>();
    for (const [key, definition] of Object.entries(QUEUES) as [QueueKey, QueueDefinition][]) {
      const deadLetters = new Queue(this, `Queue-${definition.name}-dlq`, {
        queueName: prefix + deadLetterQueueName(definition),
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
      });
      const queue = new Queue(this, `Queue-${definition.name}`, {
        queueName: prefix + definition.name,
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        visibilityTimeout: Duration.seconds(visibilityTimeoutSeconds(definition)),
        retentionPeriod: Duration.days(14),
        deadLetterQueue: { queue: deadLetters, maxReceiveCount: definition.maxReceiveCount },
      });
      queues.set(key, { queue, deadLetters });
    }

    // The master key merchant webhook secrets derive from: losing it would invalidate every secret.
    const merchantWebhookKey = new Secret(this, 'MerchantWebhookKey', {
      secretName: `naira/${stage}/merchant-webhook-key`,
      description: 'Master key of merchant webhook secrets (rotating it changes every endpoint secret)',
      generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
      removalPolicy: prod ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });

    // The partner's own secret, if it has one: a placeholder until the operator puts the real key
    // in (README).
    const partnerSecret = PARTNER_SECRETS[props.partner];
    const partnerKey =
      partnerSecret &&
      new Secret(this, partnerSecret.id, {
        secretName: `naira/${stage}/${partnerSecret.path}`,
        description: partnerSecret.description,
        generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
        removalPolicy: prod ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      });

    const logRetention = prod ? RetentionDays.ONE_YEAR : RetentionDays.ONE_MONTH;
    const environment = {
      TABLE_PREFIX: prefix,
      PARTNER: props.partner,
      PARTNER_BASE_URL: props.partnerBaseUrl,
      PARTNER_BANK_CODE: props.partnerBankCode,
      PAYSTACK_BASE_URL: props.paystackBaseUrl,
      PAYSTACK_WEBHOOK_IPS: props.paystackWebhookIps,
      TRANSFER_REQUERY_INTERVAL_SECONDS: String(props.requeryIntervalMinutes * 60),
      ...props.settings,
    };
    // Read at synth as every function reads it at cold start: a bad deploy value stops the synth.
    let deployed: ReturnType<typeof loadConfig>;
    try {
      deployed = loadConfig(environment);
    } catch (error) {
      throw new Error(`The functions' environment from this deploy's values: ${(error as Error).message}`);
    }
    // The alarms on unmatched payments, overdue transfers, contradicted settlements and events not
    // fanned out count WARN and ERROR lines of the logs: a level that drops them silences them.
    if (!ALARMED_LOG_LEVELS.includes(deployed.logLevel)) {
      throw new Error(
        `-c LOG_LEVEL=${deployed.logLevel}: the alarms read the functions' WARN and ERROR lines, so a deploy logs at ${ALARMED_LOG_LEVELS.join(', ')}`,
      );
    }
    // The dashboard's users (API.md §10): sign-in functions get the pool; key managers the pepper
    // and, once the usage plan exists, exactly the API Gateway calls a key's registration makes.
    const dashboardUsers = new DashboardUsers(this, 'DashboardUsers', { stage, prod });
    const keyManagers: ServiceFunction[] = [];
    // Each secret a function may be granted, with the variable that names it (none: not in this stage).
    const secrets: Record<SecretName, [ISecret | undefined, string]> = {
      apiKeyPepper: [pepper, 'API_KEY_PEPPER_SECRET'],
      partnerWebhookKeys: [webhookSecret, 'PARTNER_WEBHOOK_SECRET_ARN'],
      paystackSecretKey: [partnerKey, 'PAYSTACK_SECRET_KEY_ARN'],
      merchantWebhookKey: [merchantWebhookKey, 'MERCHANT_WEBHOOK_KEY_SECRET'],
    };
    const readsSecrets = (fn: ServiceFunction, names: readonly SecretName[]) => {
      for (const name of names) {
        const [secret, envName] = secrets[name];
        if (secret) fn.readsSecret(secret, envName);
      }
    };
    // The same table, queue and secret grants the local runtime enforces (infra/local/table-grants.ts).
    const grant = (fn: ServiceFunction, access: Access, auth?: RouteAuth) => {
      if (access.signsIn) {
        fn.addEnvironment('USER_POOL_ID', dashboardUsers.pool.userPoolId);
        fn.addEnvironment('USER_POOL_CLIENT_ID', dashboardUsers.client.userPoolClientId);
      }
      if (access.managesKeys) {
        fn.addEnvironment('USAGE_PLAN_NAME', usagePlanName(stage));
        keyManagers.push(fn);
      }
      for (const [name, actions] of tableGrants(access)) (tables.get(name) as TableV2).grant(fn, ...actions);
      for (const key of access.sendsTo ?? []) fn.sendsTo(queues.get(key)?.queue as Queue, QUEUES[key].urlEnv);
      readsSecrets(fn, secretGrants(access, auth));
    };

    // One function per handler file: a route served by another route's function adds none.
    for (const route of ROUTES.filter((candidate) => functionOf(candidate) === candidate.name)) {
      const fn = new ServiceFunction(this, `Fn-${route.name}`, {
        name: route.name,
        projectRoot,
        stage,
        environment,
        logRetention,
        // A partner-calling route may make several partner calls one after another (each up to
        // PARTNER_TIMEOUT_MS): it has until just before API Gateway's 29 s, so that a slow partner
        // still ends in the route's own 503 `partner_unavailable`, not a killed function's 5xx.
        timeout: (route.access as Access).callsPartner ? Duration.seconds(28) : undefined,
        // The public webhook must never take the concurrency the consumer needs.
        reservedConcurrentExecutions:
          route.auth === 'webhook' && props.webhookConcurrency > 0 ? props.webhookConcurrency : undefined,
      });
      grant(fn, route.access, route.auth);
      this.functions.set(route.name, fn);
    }

    const consumers = new Map<string, ConsumerParts>();
    for (const [key, definition] of Object.entries(QUEUES) as [QueueKey, QueueDefinition][]) {
      const reserved =
        definition === PAYMENT_EVENTS_QUEUE && props.paymentConsumerConcurrency > 0
          ? props.paymentConsumerConcurrency
          : undefined;
      const consumer = new ServiceFunction(this, `Fn-${definition.consumer}`, {
        name: definition.consumer,
        projectRoot,
        stage,
        environment,
        logRetention,
        timeout: Duration.seconds(definition.consumerTimeoutSeconds),
        reservedConcurrentExecutions: reserved,
      });
      grant(consumer, definition.consumerAccess);
      const { queue, deadLetters } = queues.get(key) as { queue: Queue; deadLetters: Queue };
      consumer.addEventSource(
        new SqsEventSource(queue, {
          batchSize: definition.batchSize,
          reportBatchItemFailures: true,
          // Never more pollers than reserved executions: a throttled receive counts towards the DLQ.
          maxConcurrency: reserved ?? definition.maxConcurrency,
        }),
      );
      this.functions.set(definition.consumer, consumer);
      consumers.set(definition.consumer, { fn: consumer, deadLetters });
    }
    for (const stream of STREAMS) {
      const consumer = new ServiceFunction(this, `Fn-${stream.consumer}`, {
        name: stream.consumer,
        projectRoot,
        stage,
        environment,
        logRetention,
        timeout: Duration.seconds(stream.consumerTimeoutSeconds),
      });
      grant(consumer, stream.consumerAccess);
      // What the stream gives up: a description of each batch still failing 23 hours after its
      // records arrived, so the operator knows which events' deliveries were never made.
      const givenUp = new Queue(this, `Queue-${stream.consumer}-given-up`, {
        queueName: prefix + givenUpQueueName(stream),
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
      });
      this.givenUpQueues.push(givenUp);
      consumer.addEventSource(
        new DynamoEventSource(tables.get(stream.table) as TableV2, {
          startingPosition: StartingPosition.TRIM_HORIZON,
          batchSize: stream.batchSize,
          parallelizationFactor: stream.parallelizationFactor,
          bisectBatchOnError: true,
          // A failing record is tried again (retries unlimited) for 23 hours, so an outage of
          // DynamoDB or SQS delays deliveries and never loses them; then, an hour before the stream
          // drops it, its batch is given up and described to the queue. A record that can never
          // succeed is skipped by the consumer itself.
          maxRecordAge: Duration.seconds(STREAM_GIVE_UP_AGE_SECONDS),
          onFailure: new SqsDlq(givenUp),
          reportBatchItemFailures: true,
          filters: [FilterCriteria.filter({ eventName: FilterRule.isEqual('INSERT') })],
        }),
      );
      this.functions.set(stream.consumer, consumer);
      consumers.set(stream.consumer, { fn: consumer, givenUp });
    }

    // API.md §7: pending transfers whose webhook never came are asked about on a schedule.
    const requery = new ServiceFunction(this, 'Fn-requery-transfers', {
      name: 'requery-transfers',
      projectRoot,
      stage,
      environment,
      logRetention,
      timeout: Duration.seconds(REQUERY_TIMEOUT_SECONDS),
    });
    grant(requery, REQUERY_ACCESS);
    new Rule(this, 'RequerySchedule', {
      description: 'Requery pending transfers at the partner (API.md §7)',
      schedule: Schedule.rate(Duration.minutes(props.requeryIntervalMinutes)),
      targets: [new LambdaFunction(requery, { retryAttempts: 0 })],
    });
    // The schedule invokes asynchronously, and Lambda itself would run a failed round twice more, a
    // minute or two later: beside the next rounds, each asking the partner, each counted as an error.
    // A failed round is simply the next one.
    requery.configureAsyncInvoke({ retryAttempts: 0 });
    this.functions.set('requery-transfers', requery);

    const webhook = this.functions.get('receive-partner-webhook') as ServiceFunction;
    const webhookUrl = webhook.addFunctionUrl({ authType: FunctionUrlAuthType.NONE });

    // DESIGN.md "Who is calling": one gate verifies key and secret for every api_key route, before
    // the usage plan counts anything. Only it reads the key table (and records last use) and the pepper.
    const authorizerFn = new ServiceFunction(this, `Fn-${API_KEY_AUTHORIZER.name}`, {
      name: API_KEY_AUTHORIZER.name,
      projectRoot,
      stage,
      environment,
      logRetention,
    });
    // Exactly its calls: GetItem and UpdateItem (last use) on keys; UpdateItem (ADD) and Query on
    // the per-client-IP counts, for failed attempts.
    for (const [name, actions] of AUTHORIZER_TABLE_GRANTS)
      (tables.get(name) as TableV2).grant(authorizerFn, ...actions);
    readsSecrets(authorizerFn, AUTHORIZER_SECRET_GRANTS);
    this.functions.set(API_KEY_AUTHORIZER.name, authorizerFn);

    this.api = this.restApi(stage, logRetention);
    const authorizer = new RequestAuthorizer(this, 'ApiKeyAuthorizer', {
      authorizerName: `naira-${stage}-api-key`,
      handler: authorizerFn,
      // The verdict is cached per key, secret and client IP (an allowlist depends on the IP), at
      // most 30 s: a wrong secret is never a cache hit, and a revocation lands within 60 s in all.
      identitySources: [
        IdentitySource.header('X-API-Key'),
        IdentitySource.header('X-API-Secret'),
        IdentitySource.context('identity.sourceIp'),
      ],
      resultsCacheTtl: Duration.seconds(API_KEY_AUTHORIZER.resultCacheSeconds),
    });
    const sessions = new CognitoUserPoolsAuthorizer(this, 'DashboardAuthorizer', {
      authorizerName: `naira-${stage}-dashboard`,
      cognitoUserPools: [dashboardUsers.pool],
      identitySource: IdentitySource.header('Authorization'),
      resultsCacheTtl: Duration.minutes(5),
    });
    const methods = new Map<IResource, Set<string>>();
    for (const route of ROUTES)
      this.routeToFunction(route, this.functions.get(functionOf(route)) as ServiceFunction, methods, {
        apiKey: authorizer,
        session: sessions,
      });
    const refuseMethod = new ServiceFunction(this, `Fn-${METHOD_NOT_ALLOWED_FUNCTION}`, {
      name: METHOD_NOT_ALLOWED_FUNCTION,
      projectRoot,
      stage,
      environment,
      logRetention,
    });
    this.functions.set(METHOD_NOT_ALLOWED_FUNCTION, refuseMethod);
    // One integration (and one API-wide invoke permission) for every path's other methods.
    const refuse = new LambdaIntegration(refuseMethod, { scopePermissionToMethod: false });
    for (const resource of methods.keys()) resource.addMethod('ANY', refuse);
    this.serveOpenApiDocument();

    // Per-key limit: the authorizer hands API Gateway the verified key (key source AUTHORIZER), so
    // failed attempts never spend it; the operator CLI registers every api_key in this plan. Routes without an API key are not in any plan (never throttled by it).
    const plan = this.api.addUsagePlan('PerKeyLimit', {
      name: usagePlanName(stage),
      throttle: {
        rateLimit: RATE_LIMIT.requests / RATE_LIMIT.windowSeconds,
        burstLimit: RATE_LIMIT.requests,
      },
      apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
    });

    // Requests without a key (GET /banks, any request lacking a credential header, which API
    // Gateway answers 401 without the authorizer, and any request no route answers) are counted
    // per client IP, as API.md §2 and §11 say, by WAF. The construct id and ACL name are kept from when it counted GET /banks only.
    new RequestsWithoutKeyPerIpLimit(this, 'PublicPerIpLimit', {
      stage: this.api.deploymentStage,
      stageName: stage,
      name: `naira-${stage}-public-per-ip`,
    });

    const transfers = this.functions.get('create-transfer') as ServiceFunction;
    this.alarms(stage, { consumers, requery, queues, webhook, transfers });

    new StringParameter(this, 'OperatorConfig', {
      parameterName: operatorConfigParameter(stage),
      description: 'Where the operator CLI finds this stage (no secrets)',
      stringValue: JSON.stringify({
        tablePrefix: prefix,
        usagePlanId: plan.usagePlanId,
        pepperSecretArn: pepper.secretArn,
        partner: props.partner,
        partnerBaseUrl: props.partnerBaseUrl,
        partnerBankCode: props.partnerBankCode,
        paystackBaseUrl: props.paystackBaseUrl,
        paystackSecretArn: partnerKey?.secretArn,
        userPoolId: dashboardUsers.pool.userPoolId,
        // The CLI credits, issues wallets and charges fees as the functions do.
        settings: props.settings ?? {},
      }),
    });
    this.keyManagersMayRegister(keyManagers, plan.usagePlanId);
    this.dashboard = new DashboardSite(this, 'Dashboard', { stage, api: this.api, logRetention });
    new CfnOutput(this, 'DashboardUrl', {
      value: this.dashboard.url,
      description: 'The developer dashboard',
    });
    new CfnOutput(this, 'DashboardUserPoolId', { value: dashboardUsers.pool.userPoolId });
    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Base URL of the API' });
    new CfnOutput(this, 'WebhookFunctionUrl', {
      value: webhookUrl.url,
      description: 'Give this to the partner',
    });
    new CfnOutput(this, 'UsagePlanId', { value: plan.usagePlanId });
    new CfnOutput(this, 'PartnerWebhookSecretArn', { value: webhookSecret.secretArn });
    if (partnerKey) new CfnOutput(this, 'PaystackSecretKeyArn', { value: partnerKey.secretArn });
  }

  private restApi(stage: string, logRetention: RetentionDays): RestApi {
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', {
      logGroupName: `/aws/apigateway/naira-${stage}-access`,
      retention: logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const api = new RestApi(this, 'Api', {
      restApiName: `naira-${stage}`,
      description: 'Payments and banking API (NGN)',
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      // API Gateway's logging role is one setting per account and region, which every stage's stack
      // sets to its own role: role and setting are retained with the stack, so deleting one stage
      // (dev) never leaves the setting pointing at a deleted role and another stage (prod) unlogged.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        stageName: stage,
        throttlingRateLimit: 1000,
        throttlingBurstLimit: 2000,
        loggingLevel: MethodLoggingLevel.ERROR,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields({
          caller: false,
          httpMethod: true,
          ip: true,
          protocol: true,
          requestTime: true,
          resourcePath: true,
          responseLength: true,
          status: true,
          user: false,
        }),
      },
    });
    // The stage's execution log (ERROR level) goes to a group API Gateway would otherwise make on
    // its first write, kept forever: made here first, with the stack's retention.
    const executionLogs = new LogGroup(this, 'ApiExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${api.restApiId}/${stage}`,
      retention: logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    api.deploymentStage.node.addDependency(executionLogs);
    const body = (value: object) => ({ 'application/json': JSON.stringify(value) });
    const unauthorized = body({ status: 'error', message: 'Invalid API credentials' });
    // The authorizer's Unauthorized, a missing credential header, and a key the usage plan does not
    // know: the contract's 401 with the exact body.
    for (const type of [ResponseType.UNAUTHORIZED, ResponseType.INVALID_API_KEY]) {
      api.addGatewayResponse(`Gw-${type.responseType}`, {
        type,
        statusCode: '401',
        responseHeaders: JSON_HEADERS,
        templates: unauthorized,
      });
    }
    // The usage plan's limit, and the authorizer's Deny: a client IP past its failed attempts (API.md §11).
    for (const type of [ResponseType.THROTTLED, ResponseType.QUOTA_EXCEEDED, ResponseType.ACCESS_DENIED]) {
      api.addGatewayResponse(`Gw-${type.responseType}`, {
        type,
        statusCode: '429',
        responseHeaders: { ...JSON_HEADERS, 'Retry-After': `'${RATE_LIMIT.windowSeconds}'` },
        templates: { 'application/json': RATE_LIMITED_BODY },
      });
    }
    // REST APIs answer an unknown path with 403 "Missing Authentication Token": it is a 404 here.
    api.addGatewayResponse('Gw-MISSING_AUTHENTICATION_TOKEN', {
      type: ResponseType.MISSING_AUTHENTICATION_TOKEN,
      statusCode: '404',
      responseHeaders: JSON_HEADERS,
      templates: body({ status: 'error', message: 'Route not found', code: 'route_not_found' }),
    });
    api.addGatewayResponse('Gw-REQUEST_TOO_LARGE', {
      type: ResponseType.REQUEST_TOO_LARGE,
      statusCode: '413',
      responseHeaders: JSON_HEADERS,
      templates: body({ status: 'error', message: 'Request body too large', code: 'payload_too_large' }),
    });
    // A body API Gateway cannot decompress (REST APIs decode gzip and deflate request bodies by
    // default): 415 in the contract's words, not DEFAULT_4XX's validation_error.
    api.addGatewayResponse('Gw-UNSUPPORTED_MEDIA_TYPE', {
      type: ResponseType.UNSUPPORTED_MEDIA_TYPE,
      statusCode: '415',
      responseHeaders: JSON_HEADERS,
      templates: body({ status: 'error', message: UNSUPPORTED_CODING, code: 'unsupported_media_type' }),
    });
    // Any other refusal of API Gateway's own (a malformed Authorization header, say): its status
    // and its words, in the envelope with a request id, never a bare `{"message"}`.
    api.addGatewayResponse('Gw-DEFAULT_4XX', {
      type: ResponseType.DEFAULT_4XX,
      responseHeaders: JSON_HEADERS,
      templates: {
        'application/json':
          '{"status":"error","message":$context.error.messageString,"code":"validation_error"}',
      },
    });
    api.addGatewayResponse('Gw-DEFAULT_5XX', {
      type: ResponseType.DEFAULT_5XX,
      responseHeaders: JSON_HEADERS,
      templates: body({ status: 'error', message: 'An internal error occurred', code: 'internal_error' }),
    });
    return api;
  }

  /**
   * What a dashboard key route may call beyond its tables: find the stage's usage plan by name,
   * register a key in it and delete one that can no longer work (API Gateway's key calls, on exactly this plan). A policy of its own, not the functions' default one: the plan depends on the
   * stage, the stage on the methods, the methods on the functions, so the functions cannot name it.
   */
  private keyManagersMayRegister(functions: readonly ServiceFunction[], usagePlanId: string): void {
    if (functions.length === 0) return;
    const apigateway = (path: string) => `arn:${this.partition}:apigateway:${this.region}::${path}`;
    const policy = new Policy(this, 'DashboardKeyRegistration', {
      statements: [
        new PolicyStatement({
          actions: ['apigateway:POST'],
          resources: [apigateway('/apikeys'), apigateway(`/usageplans/${usagePlanId}/keys`)],
        }),
        new PolicyStatement({
          actions: ['apigateway:GET'],
          resources: [apigateway('/apikeys'), apigateway('/usageplans')],
        }),
        new PolicyStatement({ actions: ['apigateway:DELETE'], resources: [apigateway('/apikeys/*')] }),
      ],
    });
    for (const fn of functions) fn.role?.attachInlinePolicy(policy);
  }

  /** The route at every path it is served on; only `api_key` routes need (and count) an API key. */
  private routeToFunction(
    route: Route,
    fn: ServiceFunction,
    methods: Map<IResource, Set<string>>,
    authorizers: { apiKey: RequestAuthorizer; session: CognitoUserPoolsAuthorizer },
  ): void {
    // One integration and one API-wide invoke permission per function, not two per method: the
    // stack stays within CloudFormation's 500 resources, and each function policy stays small.
    let integration = this.integrations.get(fn);
    if (!integration) {
      integration = new LambdaIntegration(fn, { scopePermissionToMethod: false });
      this.integrations.set(fn, integration);
    }
    const gated = route.auth === 'api_key';
    for (const path of servedPaths(route)) {
      const resource = this.api.root.resourceForPath(path);
      resource.addMethod(route.method, integration, {
        apiKeyRequired: gated,
        ...(gated ? { authorizer: authorizers.apiKey, authorizationType: AuthorizationType.CUSTOM } : {}),
        // Dashboard sessions: a Cognito ID token of the dashboard's pool, no API key.
        ...(route.auth === 'session'
          ? { authorizer: authorizers.session, authorizationType: AuthorizationType.COGNITO }
          : {}),
      });
      methods.set(resource, (methods.get(resource) ?? new Set()).add(route.method));
    }
  }

  /**
   * `GET /openapi.json` (and under the prefix): the generated document, answered by API Gateway
   * itself. Its base URL (servers, the guide's examples) is absolute, the stage's own URL from the
   * request context: a relative one resolved against `/api/v1/developer/openapi.json` doubles the
   * prefix. The JSON sits in Velocity unparsed blocks, so `$ref` and `#/…` pass through untouched;
   * only the base URL between them is evaluated.
   */
  private serveOpenApiDocument(): void {
    const placeholder = 'https://stage-url.invalid';
    const document = JSON.stringify(buildOpenApiDocument(placeholder))
      .split(placeholder)
      .map((part) => `#[[${part}]]#`)
      .join('https://$context.domainName/$context.stage');
    for (const path of OPENAPI_PATHS) {
      this.api.root.resourceForPath(path).addMethod(
        'GET',
        new MockIntegration({
          passthroughBehavior: PassthroughBehavior.NEVER,
          requestTemplates: { 'application/json': '{"statusCode": 200}' },
          integrationResponses: [
            {
              statusCode: '200',
              responseParameters: {
                'method.response.header.Content-Type': "'application/json; charset=utf-8'",
                'method.response.header.X-Request-Id': 'context.requestId',
              },
              responseTemplates: { 'application/json': document },
            },
          ],
        }),
        {
          methodResponses: [
            {
              statusCode: '200',
              responseParameters: {
                'method.response.header.Content-Type': true,
                'method.response.header.X-Request-Id': true,
              },
            },
          ],
        },
      );
    }
  }

  private alarms(
    stage: string,
    parts: {
      consumers: Map<string, ConsumerParts>;
      requery: ServiceFunction;
      queues: Map<QueueKey, { queue: Queue }>;
      webhook: ServiceFunction;
      /** `POST /transfers`: it settles transfers too, with the partner's answer to its send. */
      transfers: ServiceFunction;
    },
  ): void {
    const topic = new Topic(this, 'Alarms', { topicName: `naira-${stage}-alarms`, enforceSSL: true });
    // The topic's policy (enforceSSL's deny) replaces SNS's default one, which let the account's
    // alarms publish: without this allow, every alarm would change state and notify nobody.
    topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'StageAlarmsPublish',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          ArnLike: {
            'aws:SourceArn': `arn:${this.partition}:cloudwatch:${this.region}:${this.account}:alarm:naira-${stage}-*`,
          },
          StringEquals: { 'aws:SourceAccount': this.account },
        },
      }),
    );
    const notify = new SnsAction(topic);
    /** An alarm on any value above `threshold` (default 0) in one period. */
    const alarm = (id: string, alarmDescription: string, metric: IMetric, threshold = 0) =>
      new Alarm(this, id, {
        // Named as the README's runbook names it, after the stage: what CloudWatch and SNS show.
        alarmName: `naira-${stage}-${id}`,
        alarmDescription,
        metric,
        threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }).addAlarmAction(notify);
    /**
     * An alarm on a log line a function writes when an operator must act (`message` of the JSON
     * log): on any one in 5 minutes, or on more than `threshold` within `period`.
     */
    const logAlarm = (
      name: string,
      fn: ServiceFunction,
      message: string,
      alarmDescription: string,
      { threshold = 0, period = Duration.minutes(5) } = {},
    ) => {
      const filter = new MetricFilter(this, `${name}Filter`, {
        logGroup: fn.logGroup as LogGroup,
        filterPattern: FilterPattern.stringValue('$.message', '=', message),
        metricNamespace: 'NairaPay',
        metricName: `${name}-${stage}`,
        metricValue: '1',
      });
      alarm(`${name}Alarm`, alarmDescription, filter.metric({ period, statistic: 'Sum' }), threshold);
    };
    for (const [name, { fn, deadLetters, givenUp }] of parts.consumers) {
      if (deadLetters) {
        alarm(
          `DeadLettersAlarm-${name}`,
          `Messages in the dead-letter queue of ${name}: an operator must look (README runbook)`,
          deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
        );
      }
      if (givenUp) {
        alarm(
          `GivenUpAlarm-${name}`,
          `The stream gave up records of ${name} after 23 hours of failures: their deliveries were never made (README runbook)`,
          givenUp.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
        );
        alarm(
          `IteratorAgeAlarm-${name}`,
          `${name} is more than 5 minutes behind its stream: deliveries are late while a failure lasts (README runbook)`,
          fn.metric('IteratorAge', { statistic: 'Maximum', period: Duration.minutes(1) }),
          5 * 60_000,
        );
      }
      alarm(
        `ErrorsAlarm-${name}`,
        `The function ${name} failed`,
        fn.metricErrors({ period: Duration.minutes(1) }),
      );
      // Failed items are returned, not thrown: Errors never counts them (shared/metrics.ts does).
      alarm(
        `FailedItemsAlarm-${name}`,
        `${name} reported items of a batch as failed: they are retried, then dead-lettered (README runbook)`,
        new Metric({
          namespace: METRICS_NAMESPACE,
          metricName: FAILED_ITEMS_METRIC,
          dimensionsMap: { FunctionName: fn.functionName },
          statistic: 'Sum',
          period: Duration.minutes(1),
        }),
      );
    }
    for (const [key, { queue }] of parts.queues) {
      const definition = QUEUES[key];
      alarm(
        `QueueAgeAlarm-${definition.name}`,
        `The oldest message of ${definition.name} is older than ${definition.maxMessageAgeSeconds} s: its consumer is behind or stuck`,
        queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
        definition.maxMessageAgeSeconds,
      );
    }
    const throttled = [...[...parts.consumers.values()].map(({ fn }) => fn), parts.requery, parts.webhook];
    for (const fn of throttled) {
      const name = fn.node.id.replace(/^Fn-/, '');
      alarm(
        `ThrottlesAlarm-${name}`,
        `Lambda throttled ${name}: its reserved concurrency (or the account's) is used up`,
        fn.metricThrottles({ period: Duration.minutes(1) }),
      );
    }
    alarm(
      'AccountThrottlesAlarm',
      "Lambda throttled a function of this account and region (any stage's: concurrency is shared)",
      new Metric({
        namespace: 'AWS/Lambda',
        metricName: 'Throttles',
        statistic: 'Sum',
        period: Duration.minutes(1),
      }),
    );
    alarm(
      'WebhookErrorsAlarm',
      'The partner webhook failed (crashed or timed out): the partner retries, but look now',
      parts.webhook.metricErrors({ period: Duration.minutes(5) }),
    );
    alarm(
      'Webhook5xxAlarm',
      'The partner webhook answered 5xx at its function URL (e.g. its secret is not set, or SQS failed)',
      new Metric({
        namespace: 'AWS/Lambda',
        metricName: 'Url5xxCount',
        dimensionsMap: { FunctionName: parts.webhook.functionName },
        statistic: 'Sum',
        period: Duration.minutes(5),
      }),
    );
    alarm(
      'RequeryErrorsAlarm',
      'The requery of pending transfers failed: lost webhooks are not being caught up',
      parts.requery.metricErrors({ period: Duration.minutes(5) }),
    );
    alarm(
      'Api5xxAlarm',
      'More than 1% of API requests answered 5xx',
      this.api.metricServerError({ period: Duration.minutes(5), statistic: 'Average' }),
      0.01,
    );
    // One refusal may be someone trying the public URL; three in 15 minutes are most likely the
    // partner's own (Paystack retries a delivery every 3 minutes at first), so no payment is credited.
    logAlarm(
      'WebhooksRejected',
      parts.webhook,
      WEBHOOK_REJECTED,
      "Partner webhooks were refused (401 invalid_signature) 3 times or more in 15 minutes: if they are the partner's, no payment is being credited; check the webhook secret (README runbook)",
      { threshold: 2, period: Duration.minutes(15) },
    );
    logAlarm(
      'UnmatchedPayments',
      parts.consumers.get(PAYMENT_EVENTS_QUEUE.consumer)?.fn as ServiceFunction,
      UNMATCHED_PAYMENT,
      'A payment arrived that could not be credited to anyone (kept in unmatched-payments)',
    );
    logAlarm(
      'EventsNotFannedOut',
      parts.consumers.get(EVENTS_STREAM.consumer)?.fn as ServiceFunction,
      EVENT_NOT_FANNED_OUT,
      'An event could never be fanned out and was skipped: its deliveries were not made (README runbook)',
    );
    logAlarm(
      'OverdueTransfers',
      parts.requery,
      OVERDUE_TRANSFER,
      'A transfer is still pending TRANSFER_REQUERY_ALERT_HOURS after it was sent: reconcile it with the partner',
    );
    // A partner's verdict, by webhook (the payment events consumer), requery or the answer to a send
    // (POST /transfers), that contradicts a settled transfer; and a partner's answer about a transfer
    // that settles nothing (another reference, currency, an unreadable amount), met where transfers
    // are sent or asked about.
    const contradicted =
      "The partner's word contradicts a settled transfer (paid after it failed and was refunded, or failed after success): reconcile it with the partner";
    const unreadable =
      'The partner answered about a transfer in a way that settles nothing (another reference, another currency, an unreadable amount): the transfer stays pending; reconcile it with the partner';
    const unconfirmed =
      'The partner answered a transfer recipient with another account than asked (or none): the transfer fails, refunded; many at once mean its answers changed shape';
    for (const [name, fn, message, description] of [
      [
        'ContradictedTransfers',
        parts.consumers.get(PAYMENT_EVENTS_QUEUE.consumer)?.fn as ServiceFunction,
        CONTRADICTED_SETTLEMENT,
        contradicted,
      ],
      ['ContradictedTransfersRequery', parts.requery, CONTRADICTED_SETTLEMENT, contradicted],
      ['ContradictedTransfersApi', parts.transfers, CONTRADICTED_SETTLEMENT, contradicted],
      ['UnreadableTransferAnswersRequery', parts.requery, UNREADABLE_TRANSFER_ANSWER, unreadable],
      ['UnreadableTransferAnswersApi', parts.transfers, UNREADABLE_TRANSFER_ANSWER, unreadable],
      ['UnconfirmedRecipientsRequery', parts.requery, RECIPIENT_NOT_CONFIRMED, unconfirmed],
      ['UnconfirmedRecipientsApi', parts.transfers, RECIPIENT_NOT_CONFIRMED, unconfirmed],
    ] as const) {
      logAlarm(name, fn, message, description);
    }
  }
}
