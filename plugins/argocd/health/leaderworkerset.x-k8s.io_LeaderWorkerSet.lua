-- Argo CD health of a LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), read from the status the LWS
-- controller writes (kubernetes-sigs/lws v0.9.0, api/leaderworkerset/v1/leaderworkerset_types.go:
-- observedGeneration, replicas, readyReplicas, updatedReplicas and the conditions Available,
-- Progressing and UpdateInProgress). LWS reports no failure condition, so this check never says
-- Degraded: a group that never becomes ready stays Progressing.
-- omerender's plugins/flux/health-check-exprs.yaml holds the same rules for Flux.
-- Runs without Lua's standard libraries (Argo CD's default): base and table functions only.
local hs = {}
local generation = obj.metadata.generation
local status = obj.status
if status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the LeaderWorkerSet controller to report a status"
  return hs
end
local conditions = status.conditions or {}
local desired = 1
if obj.spec ~= nil and obj.spec.replicas ~= nil then
  desired = obj.spec.replicas
end
local ready = status.readyReplicas or 0
local updated = status.updatedReplicas or 0

-- The controller has not acted on the current spec yet: status.observedGeneration (LWS v0.9.0 on) or a
-- condition's observedGeneration (every release) differs from metadata.generation.
if generation ~= nil then
  local seen = nil
  if status.observedGeneration ~= nil and status.observedGeneration ~= generation then
    seen = status.observedGeneration
  end
  for _, condition in ipairs(conditions) do
    if seen == nil and condition.observedGeneration ~= nil and condition.observedGeneration ~= generation then
      seen = condition.observedGeneration
    end
  end
  if seen ~= nil then
    hs.status = "Progressing"
    hs.message = "Waiting for the LeaderWorkerSet controller to observe generation " .. generation ..
      " (it has seen " .. seen .. ")"
    return hs
  end
end

local function isTrue(conditionType)
  for _, condition in ipairs(conditions) do
    if condition.type == conditionType and condition.status == "True" then
      return true
    end
  end
  return false
end

if isTrue("UpdateInProgress") then
  hs.status = "Progressing"
  hs.message = "Rolling update in progress: " .. updated .. " of " .. desired .. " groups updated, " ..
    ready .. " ready"
  return hs
end
if isTrue("Progressing") then
  hs.status = "Progressing"
  hs.message = ready .. " of " .. desired .. " groups ready"
  return hs
end
if isTrue("Available") then
  hs.status = "Healthy"
  hs.message = "All " .. desired .. " groups ready"
  return hs
end
hs.status = "Progressing"
hs.message = "Waiting for the LeaderWorkerSet controller to report its conditions"
return hs
