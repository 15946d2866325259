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
