/**
 * The AWS SDK warns, once per process running Node 20, that its releases after January 2027 will
 * need Node 22. Lambda runs nodejs22.x and the lock file pins a release that runs on both, so the
 * warning says nothing new here and buried the real output of every local command. This turns off
 * that one warning, through the switch the SDK itself reads, before any client is made; every other
 * warning still prints. Imported first wherever clients are constructed.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
