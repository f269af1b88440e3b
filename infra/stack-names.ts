/** Where the operator CLI finds a stage's resources (an SSM parameter the stack writes). */
export const operatorConfigParameter = (stage: string) => `/naira/${stage}/operator-config`;
