import { Logger } from '@aws-lambda-powertools/logger';
import { config } from '#shared/config.ts';

/**
 * The one structured JSON logger. Request handlers add `request_id` per request; nothing logs
 * headers, bodies or secrets.
 */
export const logger = new Logger({ serviceName: 'naira-pay', logLevel: config.logLevel });
