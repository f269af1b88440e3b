import path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Architecture, LoggingFormat, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { BUNDLING } from '#infra/bundling.ts';

/**
 * The DynamoDB actions the code calls (`shared/`, `functions/`), and no others: the infra tests
 * check that every command the sources send is in these lists, so a new kind of call (a delete, a
 * scan, a batch) fails there until it is granted here on purpose.
 */
export const ITEM_READ_ACTIONS = ['dynamodb:GetItem'] as const;
export const READ_ACTIONS = [...ITEM_READ_ACTIONS, 'dynamodb:Query'] as const;
export const WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem'] as const;
/** Reading several items by key in one call: granted per table, only where the code does it. */
export const BATCH_READ_ACTIONS = ['dynamodb:BatchGetItem'] as const;

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
      environment: {
        LOG_LEVEL: 'INFO',
        ...props.environment,
      },
    });
  }

  /** Reading single items by key: all an API call needs of the key table (no Query, no Scan). */
  getsItems(table: ITable): this {
    table.grant(this, ...ITEM_READ_ACTIONS);
    return this;
  }

  /**
   * Read access to a table and its indexes: the actions the code calls (`GetCommand`,
   * `QueryCommand`), never `Scan`, nor `BatchGetItem` unless asked (the CDK `grantReadData` gives both).
   */
  readsTable(table: ITable): this {
    table.grant(this, ...READ_ACTIONS);
    return this;
  }

  /**
   * Read and write access: reads, plus `PutItem` and `UpdateItem` (also what a transaction's Put and
   * Update items need). Never `DeleteItem` or `BatchWriteItem`: no function deletes an item (an
   * immutable ledger entry least of all); `grantReadWriteData` would give both.
   */
  writesTable(table: ITable): this {
    table.grant(this, ...READ_ACTIONS, ...WRITE_ACTIONS);
    return this;
  }

  /** `BatchGetItem` on a table: several items by key in one call (never a Scan or a Query). */
  batchReadsTable(table: ITable): this {
    table.grant(this, ...BATCH_READ_ACTIONS);
    return this;
  }

  /** Only `UpdateItem` on a table: recording a key's last use is all an API call may write there. */
  updatesTable(table: ITable): this {
    table.grant(this, 'dynamodb:UpdateItem');
    return this;
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
