/**
 * The part of AWS WAF's rule evaluation the stack's web ACL uses, over the synthesized template
 * (CloudFormation's property names): `And`, `Or`, `Not`, a byte match on the URI path or the
 * method, a regular expression on the URI path (JavaScript's engine: the stack's patterns use only
 * what it shares with WAF's PCRE), and a size constraint on one header. As WAF documents it: a request that lacks the
 * inspected component never matches the statement; header names are not case sensitive; the
 * text transformation is NONE, so values are compared as sent.
 */
export interface WafRequest {
  method: string;
  /** As WAF sees it on a REST API stage: the stage first (`/dev/banks`). */
  path: string;
  headers?: Record<string, string>;
}

type FieldToMatch = { UriPath?: object; Method?: object; SingleHeader?: { Name: string } };

type Transformations = { TextTransformations?: { Type: string }[] };

/** Only `NONE` is modelled: a rule that transforms (LOWERCASE, URL_DECODE…) must not pass unchecked. */
function untransformed(statement: Transformations): void {
  for (const { Type } of statement.TextTransformations ?? []) {
    if (Type !== 'NONE') throw new Error(`text transformation not modelled: ${Type}`);
  }
}

export type WafStatement = {
  AndStatement?: { Statements: WafStatement[] };
  OrStatement?: { Statements: WafStatement[] };
  NotStatement?: { Statement: WafStatement };
  ByteMatchStatement?: {
    FieldToMatch: FieldToMatch;
    PositionalConstraint: string;
    SearchString: string;
  } & Transformations;
  RegexMatchStatement?: { FieldToMatch: FieldToMatch; RegexString: string } & Transformations;
  SizeConstraintStatement?: {
    FieldToMatch: FieldToMatch;
    ComparisonOperator: string;
    Size: number;
  } & Transformations;
};

function component(request: WafRequest, field: FieldToMatch): string | undefined {
  if (field.UriPath) return request.path;
  if (field.Method) return request.method;
  if (field.SingleHeader) {
    const name = field.SingleHeader.Name.toLowerCase();
    const found = Object.entries(request.headers ?? {}).find(([header]) => header.toLowerCase() === name);
    return found?.[1];
  }
  throw new Error(`field to match not modelled: ${JSON.stringify(field)}`);
}

const POSITIONS: Record<string, (value: string, search: string) => boolean> = {
  EXACTLY: (value, search) => value === search,
  STARTS_WITH: (value, search) => value.startsWith(search),
  ENDS_WITH: (value, search) => value.endsWith(search),
  CONTAINS: (value, search) => value.includes(search),
};

const COMPARISONS: Record<string, (size: number, bound: number) => boolean> = {
  EQ: (size, bound) => size === bound,
  NE: (size, bound) => size !== bound,
  LE: (size, bound) => size <= bound,
  LT: (size, bound) => size < bound,
  GE: (size, bound) => size >= bound,
  GT: (size, bound) => size > bound,
};

/** Whether `statement` matches `request`. */
export function wafMatches(statement: WafStatement, request: WafRequest): boolean {
  if (statement.AndStatement) return statement.AndStatement.Statements.every((s) => wafMatches(s, request));
  if (statement.OrStatement) return statement.OrStatement.Statements.some((s) => wafMatches(s, request));
  if (statement.NotStatement) return !wafMatches(statement.NotStatement.Statement, request);
  if (statement.ByteMatchStatement) {
    const { FieldToMatch, PositionalConstraint, SearchString } = statement.ByteMatchStatement;
    untransformed(statement.ByteMatchStatement);
    const value = component(request, FieldToMatch);
    const position = POSITIONS[PositionalConstraint];
    if (!position) throw new Error(`positional constraint not modelled: ${PositionalConstraint}`);
    return value !== undefined && position(value, SearchString);
  }
  if (statement.RegexMatchStatement) {
    const { FieldToMatch, RegexString } = statement.RegexMatchStatement;
    untransformed(statement.RegexMatchStatement);
    const value = component(request, FieldToMatch);
    return value !== undefined && new RegExp(RegexString).test(value);
  }
  if (statement.SizeConstraintStatement) {
    const { FieldToMatch, ComparisonOperator, Size } = statement.SizeConstraintStatement;
    untransformed(statement.SizeConstraintStatement);
    const value = component(request, FieldToMatch);
    const compare = COMPARISONS[ComparisonOperator];
    if (!compare) throw new Error(`comparison not modelled: ${ComparisonOperator}`);
    return value !== undefined && compare(Buffer.byteLength(value), Size);
  }
  throw new Error(`statement not modelled: ${Object.keys(statement).join(', ')}`);
}
