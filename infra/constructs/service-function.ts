import path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { ApplicationLogLevel, Architecture, LoggingFormat, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { BUNDLING } from '#infra/bundling.ts';

export interface ServiceFunctionProps {
  /** The function's name under `functions/` (kebab-case, without `.ts`). */
  name: string;
  projectRoot: string;
  stage: string;
  environment: Record<string, string>;
  timeout?: Duration;
  memorySize?: number;
  logRetention: RetentionDays;
  /** Executions reserved for (and capping) the function; unset: the account's shared pool. */
  reservedConcurrentExecutions?: number;
}

/**
 * Every function of the service, with the defaults in one place: nodejs22.x on arm64, ESM bundle
 * with the AWS SDK inside and its source map beside it (not loaded at run time: `npm run stack`
 * maps a logged stack), JSON logs kept for a set time. Grants go through the
 * bind methods, which also set the environment the shared config reads.
 */
export class ServiceFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    const environment = { LOG_LEVEL: 'INFO', ...props.environment };
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      logGroupName: `/aws/lambda/naira-${props.stage}-${props.name}`,
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    super(scope, id, {
      functionName: `naira-${props.stage}-${props.name}`,
      entry: path.join(props.projectRoot, 'functions', `${props.name}.ts`),
      handler: 'handler',
      projectRoot: props.projectRoot,
      depsLockFilePath: path.join(props.projectRoot, 'package-lock.json'),
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      bundling: BUNDLING,
      logGroup,
      loggingFormat: LoggingFormat.JSON,
      // Lambda filters JSON lines by their `level` itself, at INFO unless told: DEBUG for a function
      // logging DEBUG (-c LOG_LEVEL=DEBUG), else INFO, never above, whatever the logger's own level
      // (WARN filters in the logger): a line without a `level`, the FailedItems metric's, counts as
      // INFO to Lambda, and a WARN filter would drop it and silence its alarms.
      applicationLogLevelV2:
        environment.LOG_LEVEL === 'DEBUG' ? ApplicationLogLevel.DEBUG : ApplicationLogLevel.INFO,
      environment,
    });
  }

  /** Sending to a queue, whose URL the function gets as `envName`. */
  sendsTo(queue: IQueue, envName: string): this {
    queue.grantSendMessages(this);
    this.addEnvironment(envName, queue.queueUrl);
    return this;
  }

  /** Reading a secret, whose ARN the function gets as `envName`. */
  readsSecret(secret: ISecret, envName: string): this {
    secret.grantRead(this);
    this.addEnvironment(envName, secret.secretArn);
    return this;
  }
}
