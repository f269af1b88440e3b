import { App } from 'aws-cdk-lib';
import { buildPaymentsApp } from '#infra/payments-app.ts';

buildPaymentsApp(new App());
