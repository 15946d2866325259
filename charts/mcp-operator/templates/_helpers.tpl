{{/* Names, labels and shared fragments of every template. */}}

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

{{- /* registry/repository[:tag|@digest]; a digest wins over a tag. */}}
{{- define "mcp-operator.imageRef" -}}
{{- $name := ternary (printf "%s/%s" .registry .repository) .repository (ne .registry "") -}}
{{- if .digest -}}
{{- printf "%s@%s" $name .digest -}}
{{- else -}}
{{- printf "%s:%s" $name .tag -}}
{{- end -}}
{{- end -}}

{{- define "mcp-operator.image" -}}
{{- $i := .Values.image -}}
{{- include "mcp-operator.imageRef" (dict "registry" $i.registry "repository" $i.repository "tag" (default .Chart.AppVersion $i.tag) "digest" $i.digest) -}}
{{- end -}}

{{- /*
The bridge sidecar and its init container run the operator's own image unless
bridgeImage.repository names another one; only then do bridgeImage.tag and .digest apply
(inheriting the operator's digest for a different repository would name an image that does
not exist). The registry falls back to image.registry either way: one mirror serves both.
*/}}
{{- define "mcp-operator.bridgeImage" -}}
{{- $b := .Values.bridgeImage -}}
{{- $registry := default .Values.image.registry $b.registry -}}
{{- if $b.repository -}}
{{- include "mcp-operator.imageRef" (dict "registry" $registry "repository" $b.repository "tag" (default .Chart.AppVersion $b.tag) "digest" $b.digest) -}}
{{- else -}}
{{- $i := .Values.image -}}
{{- include "mcp-operator.imageRef" (dict "registry" $registry "repository" $i.repository "tag" (default .Chart.AppVersion $i.tag) "digest" $i.digest) -}}
{{- end -}}
{{- end -}}

{{- /* "true" or "false": the controller's --leader-elect defaults to true, so the chart always says which. */}}
{{- define "mcp-operator.leaderElection" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) -}}
{{- fail "replicaCount > 1 needs leaderElection.enabled=true: without a Lease every replica would reconcile every MCPServer at once" -}}
{{- end -}}
{{- ternary "true" "false" .Values.leaderElection.enabled -}}
{{- end -}}

{{- /* The Lease: one per release, so two releases in one namespace never share a leader. */}}
{{- define "mcp-operator.leaseName" -}}
{{- include "mcp-operator.fullname" . -}}
{{- end -}}

{{- /*
The controller's rules, each with the calls that need it (src/controller). test/charts checks
both directions against the real operator: it works with exactly these rules, every rule is
used by a call it makes, and dropping a rule breaks the behaviour named beside it.
*/}}
{{- define "mcp-operator.managerRules" -}}
# The primary cache: list and watch MCPServers (caches.ts). No get: reads come from the cache.
- apiGroups: [mcp-operator.dev]
  resources: [mcpservers]
  verbs: [list, watch]
# Status: one server-side apply to the status subresource per pass that changes it.
- apiGroups: [mcp-operator.dev]
  resources: [mcpservers/status]
  verbs: [patch]
# Rendered objects carry an owner reference with blockOwnerDeletion. Clusters that enable the
# OwnerReferencesPermissionEnforcement admission plugin (OpenShift does; so does the test control
# plane) require update on the owner's finalizers for that, checked inside the API server rather
# than requested, and without it creating those objects is refused; elsewhere the rule is unused.
- apiGroups: [mcp-operator.dev]
  resources: [mcpservers/finalizers]
  verbs: [update]
# Rendered objects: cached by the managed-by label (list, watch), server-side applied (patch,
# and create when the apply creates the object), pruned when the spec no longer needs them
# (delete). Discovery applies the snapshot ConfigMap the same way.
- apiGroups: [apps]
  resources: [deployments]
  verbs: [list, watch, create, patch, delete]
- apiGroups: ['']
  resources: [services, serviceaccounts]
  verbs: [list, watch, create, patch, delete]
# ConfigMaps as above; also every ConfigMap's metadata (like Secrets below), and get: an
# approved baseline in a ConfigMap (spec.tools.approved.configMapRef) is read when it changes.
- apiGroups: ['']
  resources: [configmaps]
  verbs: [get, list, watch, create, patch, delete]
# Why a server is not Ready: image pull errors, crash loops, unschedulable pods.
- apiGroups: ['']
  resources: [pods]
  verbs: [list, watch]
# list, watch: metadata only (PartialObjectMetadata: no value is sent or cached); the
# resourceVersions of the Secrets a server reads at start go into its pod template checksum, so
# a changed Secret rolls the pods. get: discovery reads the bearer token of spec.auth.secretRef
# (and the discovery token below) at each run, and keeps it in memory for that run only.
- apiGroups: ['']
  resources: [secrets]
  verbs: [get, list, watch]
# The discovery token of a stdio server under driftPolicy Enforce: the operator creates the
# Secret <name>-discovery with a random token (never updated), mounted into the bridge, which
# lists every tool (drift included) only to a request carrying it; deleted when Enforce is off.
- apiGroups: ['']
  resources: [secrets]
  verbs: [create, delete]
# core/v1 Events on MCPServers (kubectl describe); a repeat bumps the count with a patch.
- apiGroups: ['']
  resources: [events]
  verbs: [create, patch]
{{- end -}}
