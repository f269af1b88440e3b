import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { CREDENTIAL_HEADERS } from '#shared/api-keys/credential-headers.ts';
import {
  dashboardPaths,
  keyedPaths,
  type MethodPaths,
  PUBLIC_PATHS,
  webhookPaths,
} from '#shared/definitions/keyless.ts';
import { RATE_LIMIT } from '#shared/definitions/routes.ts';
import { RateLimited } from '#shared/errors.ts';
import { errorResult } from '#shared/http/errors.ts';

/** The body of API.md §2's 429, exactly as the HTTP stack and the local gateway send it. */
export const RATE_LIMITED_BODY = errorResult(new RateLimited(RATE_LIMIT.windowSeconds), 'synth').body;

type Statement = CfnWebACL.StatementProperty;

/** The URI path ends with `searchString` (WAF sees the stage in front: `/prod/banks`). */
const endsWith = (searchString: string): Statement => ({
  byteMatchStatement: {
    fieldToMatch: { uriPath: {} },
    positionalConstraint: 'ENDS_WITH',
    searchString,
    textTransformations: [{ priority: 0, type: 'NONE' }],
  },
});

/** True when the header is present with a value (WAF: a missing component never matches). */
const hasHeader = (name: string): Statement => ({
  sizeConstraintStatement: {
    // `singleHeader` is untyped in CDK's L1 (passed through as written): CloudFormation's `Name`.
    fieldToMatch: { singleHeader: { Name: name } },
    comparisonOperator: 'GT',
    size: 0,
    textTransformations: [{ priority: 0, type: 'NONE' }],
  },
});

const anyOf = (statements: Statement[]): Statement => {
  const [only, ...more] = statements;
  if (!only) throw new Error('anyOf needs a statement');
  return more.length === 0 ? only : { orStatement: { statements } };
};
const not = (statement: Statement): Statement => ({ notStatement: { statement } });

const methodIs = (method: string): Statement => ({
  byteMatchStatement: {
    fieldToMatch: { method: {} },
    positionalConstraint: 'EXACTLY',
    searchString: method,
    textTransformations: [{ priority: 0, type: 'NONE' }],
  },
});

/** AWS WAF's limit on one regular expression (`RegexString`), checked at synth. */
const REGEX_MAX_LENGTH = 512;

const pathMatches = (regexString: string): Statement => {
  if (regexString.length > REGEX_MAX_LENGTH)
    throw new Error(`WAF regex over ${REGEX_MAX_LENGTH}: ${regexString}`);
  return {
    regexMatchStatement: {
      fieldToMatch: { uriPath: {} },
      regexString,
      textTransformations: [{ priority: 0, type: 'NONE' }],
    },
  };
};

/** A request some route of `served` answers: its method, and one of that method's paths. */
const answeredBy = (served: readonly MethodPaths[]): Statement =>
  anyOf(
    served.map(({ method, patterns }) => ({
      andStatement: { statements: [methodIs(method), anyOf(patterns.map(pathMatches))] },
    })),
  );

/**
 * `countsWithoutKey` (shared/definitions/keyless.ts) as a WAF statement: the public paths
 * (`GET /banks`); any request lacking a credential header, which API Gateway answers 401 itself
 * without invoking the authorizer (so the authorizer's count never sees it); and any request no
 * route answers (API Gateway's own 404, or the 405 function), whatever headers it carries. Never a
 * request the partner webhook or a route of the dashboard's API answers (signed-in users, its own
 * limits). Public paths are matched by their end, served paths behind the stage.
 */
export function requestsWithoutKey(stageName: string): Statement {
  const exempt = anyOf([answeredBy(webhookPaths(stageName)), answeredBy(dashboardPaths(stageName))]);
  const lacksCredentials = anyOf(CREDENTIAL_HEADERS.map((name) => not(hasHeader(name))));
  return anyOf([
    ...PUBLIC_PATHS.map((path) => endsWith(path)),
    {
      andStatement: {
        statements: [not(exempt), anyOf([lacksCredentials, not(answeredBy(keyedPaths(stageName)))])],
      },
    },
  ]);
}

/**
 * API.md §2's limit for requests without a key (per client IP) on AWS, where no usage plan can count
 * them: a WAF web ACL on the API's stage with one rate-based rule over `requestsWithoutKey`, 100
 * requests per client IP in a 60 s window, answered 429 with the contract's body and `Retry-After`.
 * WAF counts with a short delay, so a burst may pass the 100 by a few requests before the block.
 */
export class RequestsWithoutKeyPerIpLimit extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: { stage: Stage; stageName: string; name: string }) {
    super(scope, id);
    const visibility = (metricName: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      metricName,
      // Samples keep whole requests, headers too: every merchant's `X-API-Secret` (the ACL sees all
      // traffic), readable to anyone allowed to read WAF for hours. Counted, never sampled.
      sampledRequestsEnabled: false,
    });
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: props.name,
      description: 'Per client IP limit of requests without an API key, 100 a minute',
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      customResponseBodies: {
        rateLimited: { contentType: 'APPLICATION_JSON', content: RATE_LIMITED_BODY },
      },
      rules: [
        {
          name: 'RequestsWithoutKeyPerIp',
          priority: 0,
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: 'rateLimited',
                responseHeaders: [{ name: 'Retry-After', value: String(RATE_LIMIT.windowSeconds) }],
              },
            },
          },
          statement: {
            rateBasedStatement: {
              aggregateKeyType: 'IP',
              limit: RATE_LIMIT.requests,
              evaluationWindowSec: RATE_LIMIT.windowSeconds,
              scopeDownStatement: requestsWithoutKey(props.stageName),
            },
          },
          visibilityConfig: visibility(`${props.name}-public-per-ip`),
        },
      ],
      visibilityConfig: visibility(props.name),
    });
    new CfnWebACLAssociation(this, 'OnStage', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}
