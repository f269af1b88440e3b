import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type CfnElement, Validations } from 'aws-cdk-lib';
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
    'Merchant routes use a Lambda REQUEST authorizer that verifies X-API-Key and X-API-Secret against the hashed secret before the usage plan counts the key; GET /banks is public by contract, the webhook is verified by its signature, and the ANY methods only answer 405 (a function that reads nothing and touches no data).',
  );
  acknowledge(
    'COG4',
    'The API authenticates merchants with API key pairs (API.md section 2), not Cognito user pools.',
  );
}
