import { type Config, loadConfig } from '#shared/config-schema.ts';

export * from '#shared/config-schema.ts';

/**
 * The configuration of this process, validated once at module load. What reads a configuration
 * that is not this process's (the stack's check of a stage's deploy settings) imports
 * `shared/config-schema.ts` instead, untouched by the environment it runs in.
 */
export const config: Config = loadConfig(process.env);
