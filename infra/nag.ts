import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type CfnElement, Token, Validations } from 'aws-cdk-lib';
import { VALIDATION_REPORT_FILE } from 'aws-cdk-lib/cx-api';
import type { PaymentsStack } from '#infra/stack.ts';

/** The part of CDK's validation report (`validation-report.json` in the cloud assembly) counted here. */
interface ValidationReport {
  pluginReports?: Array<{
    pluginName: string;
    violations?: Array<{ violatingConstructs?: unknown[] }>;
    suppressedViolations?: Array<{ violatingConstructs?: unknown[] }>;
  }>;
}

/**
 * One line per validation plugin of a synthesized app, from the report CDK writes into the cloud
 * assembly: each finding is a rule on one resource; the acknowledged ones (see
 * `acknowledgeNagFindings`) are there as suppressed, the rest fail the synth. E.g.
 * `cdk-nag (AwsSolutions): 0 unacknowledged findings, 193 acknowledged (12 rules, reasons in infra/nag.ts)`.
 */
export function nagSummary(assemblyDirectory: string): string {
  const file = path.join(assemblyDirectory, VALIDATION_REPORT_FILE);
  if (!existsSync(file)) return 'cdk-nag: no validation report (no stack was validated)';
  const report = JSON.parse(readFileSync(file, 'utf8')) as ValidationReport;
  const findings = (violations: Array<{ violatingConstructs?: unknown[] }> = []) =>
    violations.reduce((count, violation) => count + (violation.violatingConstructs?.length ?? 0), 0);
  return (report.pluginReports ?? [])
    .map(
      (plugin) =>
        `cdk-nag (${plugin.pluginName}): ${findings(plugin.violations)} unacknowledged findings, ` +
        `${findings(plugin.suppressedViolations)} acknowledged ` +
        `(${plugin.suppressedViolations?.length ?? 0} rules, reasons in infra/nag.ts)`,
    )
    .join('\n');
}

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
  for (const queue of stack.givenUpQueues) {
    Validations.of(queue).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SQS3',
      reason:
        "A stream's failure destination is itself the end of the line: Lambda writes a description of each batch it gave up, and the operator reads it there (an alarm fires on the first); a queue behind it would only move the same messages once more.",
    });
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
    'APIG4',
    'Merchant routes use a Lambda REQUEST authorizer that verifies X-API-Key and X-API-Secret against the hashed secret before the usage plan counts the key; GET /banks is public by contract, the webhook is verified by its signature, and the ANY methods only answer 405 (a function that reads nothing and touches no data).',
  );
  acknowledge(
    'COG4',
    'Merchant routes authenticate API key pairs (API.md section 2) with the REQUEST authorizer; only the dashboard routes use the Cognito user pool authorizer.',
  );
  acknowledgeDashboard(stack, acknowledge);
}

/** The dashboard's Cognito pool, its S3 and CloudFront hosting, and its key registration (API.md §10). */
function acknowledgeDashboard(stack: PaymentsStack, acknowledge: (id: string, reason: string) => void): void {
  // As cdk-nag writes them in a finding: the literal, or the pseudo parameter of an environment-agnostic stack.
  const partition = Token.isUnresolved(stack.partition) ? '<AWS::Partition>' : stack.partition;
  const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
  acknowledge(
    'COG2',
    'TOTP is available to every dashboard user (API.md section 10 asks for it available, not required); a deployment that must require it sets the pool to MFA ON.',
  );
  acknowledge(
    'COG8',
    "The Plus feature plan (threat protection) is a paid tier; the pool is invite-only, with a 12-character policy, Cognito's own lockout after failed sign-ins, and optional TOTP. Operators may enable it per deployment.",
  );
  acknowledge(
    `IAM5[Resource::arn:${partition}:apigateway:${region}::/apikeys/*]`,
    "Deleting a key that can no longer work (revoked, expired, or registered for a key never stored) is DELETE /apikeys/<id>, an id API Gateway assigns when the key is created: the dashboard key routes may delete API keys, and register them only in this stage's usage plan.",
  );
  acknowledge(
    'S1',
    "The bucket holds the dashboard's static build, rewritten only by deploys (recorded by CloudTrail) and read only by CloudFront; the API calls behind the dashboard are in API Gateway's access logs.",
  );
  acknowledge(
    'CFR3',
    "The distribution serves the dashboard's static files and forwards its API calls, which API Gateway's access logs record; per-request CDN logs would add cost without a question they answer.",
  );
  acknowledge(
    'CFR4',
    "The default *.cloudfront.net certificate, whose TLS policy CloudFront sets; a custom domain with TLSv1.2_2021 is each deployment's choice (it needs a certificate in us-east-1).",
  );
  acknowledge(
    'CFR1',
    "Merchants' people sign in from anywhere (travel, remote staff); sign-in is gated by Cognito, not by country.",
  );
  acknowledge(
    'CFR2',
    'No WAF on the user pool: Cognito throttles sign-in attempts and every API call needs a valid token; operators attach a web ACL as their traffic requires.',
  );
  // CDK's BucketDeployment: a custom resource that copies the build from CDK's asset bucket into
  // the dashboard's bucket at deploy time, with the grants CDK gives it.
  const files = stack.getLogicalId(stack.dashboard.bucket.node.defaultChild as CfnElement);
  const deployment = [
    'Action::s3:GetBucket*',
    'Action::s3:GetObject*',
    'Action::s3:List*',
    'Action::s3:Abort*',
    'Action::s3:DeleteObject*',
    'Resource::*',
    `Resource::<${files}.Arn>/*`,
    `Resource::arn:${partition}:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-${region}/*`,
  ];
  for (const finding of deployment) {
    acknowledge(
      `IAM5[${finding}]`,
      "CDK's BucketDeployment copies the dashboard's build from CDK's asset bucket into the dashboard bucket at deploy time; these are the grants CDK gives that one custom resource, on those two buckets.",
    );
  }
}
