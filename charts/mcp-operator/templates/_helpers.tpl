{{/* Names and labels shared by every template. */}}

{{- define "mcp-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "mcp-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "mcp-operator.labels" -}}
{{ include "mcp-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "mcp-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "mcp-operator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* registry/repository[:tag|@digest] from an image block, with fallbacks from .Values.image. */}}
{{- define "mcp-operator.imageRef" -}}
{{- $img := .image -}}
{{- $root := .root -}}
{{- $registry := default $root.Values.image.registry $img.registry -}}
{{- $repository := default $root.Values.image.repository $img.repository -}}
{{- $digest := default $root.Values.image.digest $img.digest -}}
{{- $tag := default (default $root.Chart.AppVersion $root.Values.image.tag) $img.tag -}}
{{- $name := ternary (printf "%s/%s" $registry $repository) $repository (ne $registry "") -}}
{{- if $digest -}}
{{- printf "%s@%s" $name $digest -}}
{{- else -}}
{{- printf "%s:%s" $name $tag -}}
{{- end -}}
{{- end -}}

{{- define "mcp-operator.image" -}}
{{- include "mcp-operator.imageRef" (dict "image" .Values.image "root" .) -}}
{{- end -}}

{{- define "mcp-operator.bridgeImage" -}}
{{- include "mcp-operator.imageRef" (dict "image" .Values.bridgeImage "root" .) -}}
{{- end -}}

{{- define "mcp-operator.leaderElection" -}}
{{- if or .Values.leaderElection.enabled (gt (int .Values.replicaCount) 1) -}}true{{- end -}}
{{- end -}}

{{- /*
Every rule names the behaviour that needs it; test/charts checks that the operator works with
exactly these rules and that dropping one breaks the behaviour named beside it.
*/}}
{{- define "mcp-operator.managerRules" -}}
# Watch MCPServers: the work queue's source.
- apiGroups: [mcp-operator.dev]
  resources: [mcpservers]
  verbs: [get, list, watch]
# Write status once per reconcile pass.
- apiGroups: [mcp-operator.dev]
  resources: [mcpservers/status]
  verbs: [get, update, patch]
# Owner references with blockOwnerDeletion need update on the owner's finalizers
# (OwnerReferencesPermissionEnforcement admission).
- apiGroups: [mcp-operator.dev]
  resources: [mcpservers/finalizers]
  verbs: [update]
# Render → server-side apply the owned objects; delete the ones no longer desired.
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: ['']
  resources: [services, serviceaccounts, configmaps]
  verbs: [get, list, watch, create, update, patch, delete]
# Why a server is not Ready: image pull errors, crash loops, unschedulable pods.
- apiGroups: ['']
  resources: [pods]
  verbs: [get, list, watch]
# Discovery reads the bearer token named by spec.auth.secretRef (values never leave memory).
- apiGroups: ['']
  resources: [secrets]
  verbs: [get]
# Events for every change and failure.
- apiGroups: ['', events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end -}}
