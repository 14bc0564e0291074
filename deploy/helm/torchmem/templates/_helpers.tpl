{{/* The release's resource name: the release name, with "torchmem" added unless it holds it. */}}
{{- define "torchmem.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "torchmem.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "torchmem.labels" -}}
{{ include "torchmem.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "torchmem.tokenSecret" -}}
{{- .Values.token.existingSecret | default (printf "%s-token" (include "torchmem.fullname" .)) -}}
{{- end -}}

{{/* Scrape settings shared by the ServiceMonitor and the PodMonitor. */}}
{{- define "torchmem.scrapeEndpoint" -}}
port: metrics
path: /metrics
# The job series carry the job's own namespace/pod/container labels (the
# workload's, as dcgm-exporter does); without honorLabels the operator's
# target labels (the agent's pod) would rename them to exported_*.
honorLabels: true
interval: {{ .monitor.interval }}
scrapeTimeout: {{ .monitor.scrapeTimeout }}
{{- if .root.Values.webConfig.existingSecret }}
scheme: https
{{- end }}
{{- if not .root.Values.metricsNoAuth }}
authorization:
  type: Bearer
  credentials:
    name: {{ include "torchmem.tokenSecret" .root }}
    key: {{ .root.Values.token.key }}
{{- end }}
relabelings:
  # One series per node, named by the node rather than the pod's IP.
  - sourceLabels: [__meta_kubernetes_pod_node_name]
    targetLabel: instance
{{- end -}}
