{{/* Shared by the alert rules and the dashboard. */}}

{{- /* The operator's own series, as the chart's ServiceMonitor labels them (job = the metrics Service). */}}
{{- define "mcp-operator.operatorSelector" -}}
job="{{ include "mcp-operator.fullname" . }}-metrics",namespace="{{ .Release.Namespace }}"
{{- end -}}

{{- /*
Per-server series carry `server="<namespace>/<name>"`; alerts split it into `namespace` (which
Alertmanager routes by, replacing the operator's own) and `mcpserver`.
*/}}
{{- define "mcp-operator.byServer" -}}
label_replace(label_replace({{ . }}, "namespace", "$1", "server", "([^/]+)/.*"), "mcpserver", "$1", "server", "[^/]+/(.*)")
{{- end -}}
