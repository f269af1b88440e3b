import { type CfnElement, Validations } from 'aws-cdk-lib';
import type { PaymentsStack } from '#infra/stack.ts';

/**
 * cdk-nag (AWS Solutions) findings this stack accepts, each with the reason it is right here.
 * Anything not listed fails synth and the infra tests.
 */
export function acknowledgeNagFindings(stack: PaymentsStack): void {
  const acknowledge = (id: string, reason: string) =>
    Validations.of(stack).acknowledge({ id: `AwsSolutions::AwsSolutions-${id}`, reason });

  acknowledge(
    'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    'AWSLambdaBasicExecutionRole only lets each function write its own CloudWatch logs; every data grant is a scoped inline policy.',
  );
  acknowledge(
    'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
    "API Gateway's account-level logging role needs exactly this managed policy to write execution logs.",
  );
  for (const table of stack.tables.values()) {
    const logicalId = stack.getLogicalId(table.node.defaultChild as CfnElement);
    acknowledge(
      `IAM5[Resource::<${logicalId}.Arn>/index/*]`,
      `DynamoDB grants on ${table.node.id} include its own indexes (table/<name>/index/*): only functions granted the table itself can query them.`,
    );
  }
  acknowledge(
    'L1',
    'nodejs22.x is the runtime the code and the AWS SDK pin target; moving to a newer runtime is a deliberate upgrade, tested first.',
  );
  acknowledge(
    'SMG4',
    'The key pepper cannot rotate automatically: every stored secret hash depends on it. The partner webhook secret is set by the partner, and rotated with them (several secrets are accepted at once).',
  );
  acknowledge(
    'APIG2',
    'Requests are validated in the Lambda HTTP stack with the same schemas that define the contract, so errors come back in the API envelope; an API Gateway validator would answer in its own format.',
  );
  acknowledge(
    'APIG3',
    'No WAF in the base stack: the per-key usage plan, stage throttling and signature checks guard it; operators attach a WAF web ACL per deployment as their traffic requires.',
  );
  acknowledge(
    'APIG4',
    'Merchants authenticate with X-API-Key (checked by the usage plan) and X-API-Secret (verified in the Lambda against the hashed secret); GET /banks is public by contract, the webhook is verified by its signature, and the ANY methods only answer 405 (a function that reads nothing and touches no data).',
  );
  acknowledge(
    'COG4',
    'The API authenticates merchants with API key pairs (API.md section 2), not Cognito user pools.',
  );
}
