import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { MERCHANT_ROUTES, RATE_LIMIT, servedPaths } from '#shared/definitions/routes.ts';
import { RateLimited } from '#shared/errors.ts';
import { errorResult } from '#shared/http/errors.ts';

/** The paths of the merchant API that take no credentials (`GET /banks` and its aliases). */
export const PUBLIC_PATHS: readonly string[] = MERCHANT_ROUTES.filter((route) => route.auth === 'none')
  .flatMap((route) => servedPaths(route))
  .sort();

/** The body of API.md §2's 429, exactly as the HTTP stack and the local gateway send it. */
export const RATE_LIMITED_BODY = errorResult(new RateLimited(RATE_LIMIT.windowSeconds), 'synth').body;

/**
 * API.md §2's limit for requests without a key (per client IP) on AWS, where no usage plan can count
 * them: a WAF web ACL on the API's stage with one rate-based rule over the public paths, 100
 * requests per client IP in a 60 s window, answered 429 with the contract's body and `Retry-After`.
 * WAF counts with a short delay, so a burst may pass the 100 by a few requests before the block.
 * Matched by the end of the path: WAF sees the path with the stage in front (`/prod/banks`).
 */
export class PublicPerIpLimit extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: { stage: Stage; name: string }) {
    super(scope, id);
    const endsWith = (path: string): CfnWebACL.StatementProperty => ({
      byteMatchStatement: {
        fieldToMatch: { uriPath: {} },
        positionalConstraint: 'ENDS_WITH',
        searchString: path,
        textTransformations: [{ priority: 0, type: 'NONE' }],
      },
    });
    const [only, ...more] = PUBLIC_PATHS;
    if (!only) throw new Error('no public path to limit');
    const visibility = (metricName: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      metricName,
      sampledRequestsEnabled: true,
    });
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: props.name,
      description: 'Per client IP limit of the API routes that take no key, 100 a minute',
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      customResponseBodies: {
        rateLimited: { contentType: 'APPLICATION_JSON', content: RATE_LIMITED_BODY },
      },
      rules: [
        {
          name: 'PublicRoutesPerIp',
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
              scopeDownStatement:
                more.length === 0
                  ? endsWith(only)
                  : { orStatement: { statements: PUBLIC_PATHS.map(endsWith) } },
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
