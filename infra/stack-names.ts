/** Where the operator CLI finds a stage's resources (an SSM parameter the stack writes). */
/** The usage plan that limits each API key of a stage (the dashboard's key routes find it by name). */
export const usagePlanName = (stage: string) => `naira-${stage}-per-key`;

export const operatorConfigParameter = (stage: string) => `/naira/${stage}/operator-config`;
