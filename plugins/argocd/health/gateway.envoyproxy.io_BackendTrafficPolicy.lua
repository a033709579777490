-- Argo CD health of an Envoy Gateway BackendTrafficPolicy (gateway.envoyproxy.io/v1alpha1), read from
-- the policy status Envoy Gateway writes per ancestor (Gateway API PolicyStatus: status.ancestors[],
-- each with an ancestorRef and conditions; envoyproxy/gateway v1.9.0,
-- internal/gatewayapi/status/policy.go): Accepted is False with the reason when the policy is invalid,
-- conflicts or finds no target. Checked in this order, as Flux evaluates
-- plugins/flux/health-check-exprs.yaml: a condition older than metadata.generation (Progressing), an
-- Accepted condition that is False (Degraded), one that is True (Healthy); else Progressing.
-- Runs without Lua's standard libraries (Argo CD's default): base and table functions only.
local hs = {}
local generation = obj.metadata.generation
local ancestors = {}
if obj.status ~= nil and obj.status.ancestors ~= nil then
  ancestors = obj.status.ancestors
end

local function ancestorName(ancestor)
  local ref = ancestor.ancestorRef or {}
  local name = ref.name or "?"
  if ref.namespace ~= nil then
    name = ref.namespace .. "/" .. name
  end
  return (ref.kind or "Gateway") .. " " .. name
end

-- "reason: message", or whichever of the two the condition has.
local function detail(condition)
  if condition.reason ~= nil and condition.message ~= nil and condition.message ~= "" then
    return condition.reason .. ": " .. condition.message
  end
  return condition.reason or condition.message or "no reason given"
end

for _, ancestor in ipairs(ancestors) do
  for _, condition in ipairs(ancestor.conditions or {}) do
    if generation ~= nil and condition.observedGeneration ~= nil and condition.observedGeneration ~= generation then
      hs.status = "Progressing"
      hs.message = "Waiting for Envoy Gateway to observe generation " .. generation .. " (" ..
        ancestorName(ancestor) .. " reports generation " .. condition.observedGeneration .. ")"
      return hs
    end
  end
end

local accepted = {}
for _, ancestor in ipairs(ancestors) do
  for _, condition in ipairs(ancestor.conditions or {}) do
    if condition.type == "Accepted" and condition.status == "False" then
      hs.status = "Degraded"
      hs.message = "Not accepted for " .. ancestorName(ancestor) .. ": " .. detail(condition)
      return hs
    end
    if condition.type == "Accepted" and condition.status == "True" then
      table.insert(accepted, ancestorName(ancestor))
    end
  end
end

if #accepted > 0 then
  hs.status = "Healthy"
  hs.message = "Accepted for " .. table.concat(accepted, ", ")
  return hs
end
hs.status = "Progressing"
hs.message = "Waiting for Envoy Gateway to accept the policy"
return hs
