-- Argo CD health of a Prometheus Operator PodMonitor (monitoring.coreos.com/v1). From v0.86 on, with its
-- StatusForConfigurationResources feature gate, the operator writes status.bindings[]: one per
-- Prometheus (or PrometheusAgent) that selects the PodMonitor, each with an Accepted condition
-- (prometheus-operator pkg/apis/monitoring/v1/types.go, ConfigResourceStatus). Without that status
-- (older operators, the gate off, no Prometheus selecting it) there is nothing to wait for: Healthy.
-- A binding older than metadata.generation is Progressing; an Accepted condition that is False (the
-- Prometheus refused the PodMonitor, so its pods are not scraped) is Degraded.
-- Runs without Lua's standard libraries (Argo CD's default): base and table functions only.
local hs = {}
local generation = obj.metadata.generation
local bindings = {}
if obj.status ~= nil and obj.status.bindings ~= nil then
  bindings = obj.status.bindings
end

local function workload(binding)
  return (binding.resource or "?") .. " " .. (binding.namespace or "?") .. "/" .. (binding.name or "?")
end

-- "reason: message", or whichever of the two the condition has.
local function detail(condition)
  if condition.reason ~= nil and condition.message ~= nil and condition.message ~= "" then
    return condition.reason .. ": " .. condition.message
  end
  return condition.reason or condition.message or "no reason given"
end

for _, binding in ipairs(bindings) do
  for _, condition in ipairs(binding.conditions or {}) do
    if generation ~= nil and condition.observedGeneration ~= nil and condition.observedGeneration ~= generation then
      hs.status = "Progressing"
      hs.message = "Waiting for " .. workload(binding) .. " to observe generation " .. generation ..
        " (it has seen " .. condition.observedGeneration .. ")"
      return hs
    end
  end
end

local accepted = 0
for _, binding in ipairs(bindings) do
  for _, condition in ipairs(binding.conditions or {}) do
    if condition.type == "Accepted" and condition.status == "False" then
      hs.status = "Degraded"
      hs.message = "Rejected by " .. workload(binding) .. ": " .. detail(condition)
      return hs
    end
    if condition.type == "Accepted" and condition.status == "True" then
      accepted = accepted + 1
    end
  end
end

hs.status = "Healthy"
if accepted > 0 then
  hs.message = "Accepted by " .. accepted .. " of " .. #bindings .. " Prometheus workloads selecting it"
else
  hs.message = "No Prometheus reports on this PodMonitor"
end
return hs
