-- stdlib/kvplan/disagg.lua: disaggregated prefill/decode (xPyD): the KV a
-- request moves from its prefill instance to its decode instance, and the
-- two pools sized apart (kv.plan's "disaggregated" mode).
-- Stdlib layer: the link facts and the policy are chosen here; the bytes are
-- the ledger's (engine/core/ledger.c kvp_ledger_seq_bytes: layer kinds,
-- sliding windows, MLA, hybrid states, whole blocks), the pools' times the
-- simulator's (kv.simulate phase = "prefill" | "decode", engine/core/sim.c).
--
--   local disagg = require "kvplan.disagg"
--   local p = kv.deploy{model = "llama-3.1-70b", gpu = "h100-sxm", tp = 4}
--   local t = disagg.kv_transfer(p, p, 8192)
--   print(t.ms, t.bytes_per_gpu)   -- the KV of an 8192-token prompt, H100 to H100
--
-- The transfer of one request's prompt KV (DistServe, Zhong et al., OSDI 2024,
-- section 4.4: the KV moves once per request, after its prefill):
--   bytes on one GPU   max over the pipeline stages of l:seq_bytes(prompt, stage):
--                      the blocks the prompt fills on one GPU of that stage
--                      (a vLLM NixlConnector read moves whole blocks)
--   time               latency + max(sender bytes / sender link,
--                                    receiver bytes / receiver link)
--                      every GPU of the prefill instance sends its own share
--                      of the heads and layers at once over its own NIC, and
--                      every GPU of the decode instance receives its share
--                      over its own; a decode instance of another tp than the
--                      prefill's receives another share
--   link               opts.kv_link_gbps (GB/s one way a GPU), else the
--                      catalog's scaleout_gbps of the GPU's standard system
--                      (gpus_data.lua: DGX H100/H200/B200, 8x ConnectX-7
--                      400 Gb/s, one per GPU: 50 GB/s); a GPU without one
--                      needs kv_link_gbps
--   latency            opts.kv_link_latency_us, else M.link_latency_us
-- Not modelled: the prefill instance holding the blocks until the decode has
-- read them, the decode engine's steps between the KV's arrival and its
-- first token beyond the simulated queue, several requests sharing a NIC at
-- once (each request is given the whole link).

local util = require "kvplan.util"

local M = {}

-- Fixed cost of one request's KV transfer, microseconds: 6.7 ms, the average
-- "post duration" NIXL's telemetry measured for vLLM's NixlConnector READ of a
-- request of about 5,000 tokens (block 64), on the KV's arrival path
-- (vllm-project/vllm issue 50913, "[RFC]: Cutting P/D-disaggregation TTFT",
-- 2026; the same setup's whole transfer took ~29 ms, pull request 51919).
-- One measurement of one deployment: give yours (kv_link_latency_us).
M.link_latency_us = 6700

--- The link a deployment's GPUs send or receive KV over: GB/s one way for
--- one GPU and where the figure comes from; nil and why when neither the
--- options nor the catalog give one.
function M.link(d, opts)
  opts = opts or {}
  local g = opts.kv_link_gbps
  if g ~= nil then
    if type(g) ~= "number" or not (g > 0 and g < math.huge) then
      util.raise("field 'kv_link_gbps' must be a number > 0 (GB/s one way for one GPU), got %s",
                 tostring(g))
    end
    return g, "kv_link_gbps"
  end
  local gpu = d.gpu
  if gpu.scaleout_gbps then return gpu.scaleout_gbps, gpu.scaleout or "catalog scaleout_gbps" end
  return nil, string.format("gpu '%s' has no scale-out link in the catalog (scaleout_gbps): give "
    .. "kv_link_gbps (GB/s one way for one GPU)", tostring(gpu.id or gpu.name or "custom"))
end

--- The latency of one transfer, microseconds (opts.kv_link_latency_us or
--- M.link_latency_us).
function M.latency_us(opts)
  local v = (opts or {}).kv_link_latency_us
  if v == nil then return M.link_latency_us end
  if type(v) ~= "number" or not (v >= 0 and v < math.huge) then
    util.raise("field 'kv_link_latency_us' must be a number >= 0 (microseconds), got %s", tostring(v))
  end
  return v
end

--- KV bytes `tokens` prompt tokens hold on one GPU of deployment d (the most
--- of any pipeline stage) and on all its GPUs.
function M.kv_bytes(d, tokens)
  tokens = util.count(tokens, "tokens")
  local l = d:ledger()
  local most, all = 0, 0
  for s = 1, l.stages do
    local b = l:seq_bytes(tokens, s)
    if b > most then most = b end
    all = all + b * d.tp
  end
  return most, all
end

--- One request's KV transfer from prefill deployment p to decode deployment
--- dd for a prompt of `tokens` tokens: {ms, bytes (all GPUs of p), bytes_per_gpu
--- (one sender), bytes_per_receiver, link_gbps_prefill, link_gbps_decode,
--- latency_us}; nil and why when a link is unknown. opts: kv_link_gbps,
--- kv_link_latency_us.
function M.kv_transfer(p, dd, tokens, opts)
  local gp, why = M.link(p, opts)
  if gp == nil then return nil, why end
  local gd, why_d = M.link(dd, opts)
  if gd == nil then return nil, why_d end
  local lat = M.latency_us(opts)
  local send, all = M.kv_bytes(p, tokens)
  local recv = M.kv_bytes(dd, tokens)
  local s = math.max(send / (gp * 1e9), recv / (gd * 1e9))
  return {ms = lat / 1e3 + s * 1e3, bytes = all, bytes_per_gpu = send, bytes_per_receiver = recv,
          link_gbps_prefill = gp, link_gbps_decode = gd, latency_us = lat}
end

return M
