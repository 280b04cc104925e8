"""What `switchback worker` (worker.py) reads from the environment, as `switchback worker
--help` prints it. Standard library only: the CLI builds its help without loading the engine.
tests/test_cli_help.py holds it to worker.ENV_VARS, both ways."""

WORKER = """\
environment (all optional; the defaults suit the embedded stack, python -m switchback.devstack up):
 Temporal (its standard client configuration: variables, then the profile, then defaults)
  TEMPORAL_ADDRESS        host:port (default: the profile's, else 127.0.0.1:7233)
  TEMPORAL_NAMESPACE      the namespace (default: the profile's, else default)
  TEMPORAL_API_KEY        an API key (Temporal Cloud); turns TLS on
  TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME
                          TLS / mTLS
  TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE
                          a profile of Temporal's config file (temporal.toml)
 Worker Deployment Versioning (docs/versioning.md; the Worker Controller sets both)
  TEMPORAL_DEPLOYMENT_NAME, TEMPORAL_WORKER_BUILD_ID
                          this worker is that version; every job it starts is pinned to
                          it (both or neither; SWITCHBACK_DEPLOYMENT_NAME and
                          SWITCHBACK_BUILD_ID, the old names, are still read)
 the worker
  SWITCHBACK_TASK_QUEUE   task queue to poll (default switchback)
  SWITCHBACK_WORKER_ROLE  all (default) | workflows | model | tools: what this process runs
  SWITCHBACK_MODEL_TASK_QUEUE, SWITCHBACK_TOOL_TASK_QUEUE
                          the queues of model and tool activities when jobs use separate
                          ones (config `task_queues`); a model / tools worker polls only that
  SWITCHBACK_CONFIG_DIR   your configs folder, laid over the packaged ones (default: ./configs)
  SWITCHBACK_MAX_CONCURRENT_ACTIVITIES, SWITCHBACK_MAX_CONCURRENT_WORKFLOW_TASKS,
  SWITCHBACK_MAX_CACHED_WORKFLOWS
                          worker tuning (sticky cache 0 forces a replay of every task)
  SWITCHBACK_STICKY_TIMEOUT_SECONDS
                          sticky schedule-to-start timeout (default 5)
  SWITCHBACK_GRACEFUL_SHUTDOWN_SECONDS
                          on SIGTERM, let running activities finish this long
  SWITCHBACK_UVLOOP       0: asyncio's own event loop instead of uvloop
  SWITCHBACK_LOCAL_MODEL_CALLS
                          0: no job's model call runs as a local activity (default: on role
                          all workers, those of jobs that opt in may)
  SWITCHBACK_SEARCH_ATTRIBUTES
                          off: no job upserts search attributes (default on: the worker
                          checks the namespace has them, adding what it may)
 model endpoints
  OPENAI_BASE_URL, OPENAI_API_KEY
                          the `default` endpoint (and the variables endpoints.yaml names)
  SWITCHBACK_ENDPOINTS_FILE
                          the endpoints jobs may name (default <configs>/endpoints.yaml)
  TIKTOKEN_CACHE_DIR      where token encodings are cached
 storage
  AWS_ENDPOINT_URL_S3, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION,
  AWS_DEFAULT_REGION      the S3-compatible workspace store
  SWITCHBACK_S3_ADDRESSING
                          path (default) | virtual: how buckets are addressed
  SWITCHBACK_WORKSPACE_BUCKETS
                          the buckets a job config may choose (default switchback)
  SWITCHBACK_PAYLOAD_BUCKET, SWITCHBACK_PAYLOAD_THRESHOLD
                          where payloads above the threshold go instead of history (0: off)
  SWITCHBACK_CODEC_KEYS   id:base64key,... - AES-GCM payload encryption (off if unset)
  SWITCHBACK_DOCUMENT_ROOTS
                          local folders job input may name documents from (':' or ',')
 tools
  SWITCHBACK_MCP_FILE     the MCP servers this worker offers (default <configs>/mcp.yaml)
  SWITCHBACK_WEB_SEARCH_URL, SWITCHBACK_WEB_SEARCH_KEY
                          the web_search tool
  SWITCHBACK_GRAPH_PATH, SWITCHBACK_GRAPH_SEED, NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD,
  NEO4J_DATABASE          the validator's graph
 telemetry (docs/operating.md)
  SWITCHBACK_METRICS_PORT, SWITCHBACK_PROMETHEUS_BIND
                          Prometheus metrics: a port on 0.0.0.0, or host:port
  SWITCHBACK_LOG_FORMAT, SWITCHBACK_LOG_LEVEL
                          json | text log lines, and their level
  OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
  OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
  OTEL_SDK_DISABLED       OpenTelemetry traces"""
