-- slurm-elastic's job_submit.lua: records an elastic job's node bounds (-N MIN-MAX) and
-- --elastic-class in its AdminComment at submission, because Slurm forgets the bounds once the
-- job runs and elasticd needs them to grow and shrink it, and the class to serve it.
-- AdminComment is admin-only, so users cannot forge the record. It also lowers an elastic job's
-- priority (ELASTIC_NICE below), so that elastic jobs wait behind rigid ones in Slurm's queue.
-- Install: JobSubmitPlugins=lua in slurm.conf and this file as job_submit.lua beside slurm.conf;
-- a site with its own job_submit.lua calls slurm_elastic_record_bounds(job_desc),
-- slurm_elastic_yield_queue(job_desc) and, for background jobs,
-- slurm_elastic_steer_background(job_desc) from it.

local NO_VAL = 4294967294

-- Added to the nice value of every foreground --elastic job (0: none). An elastic job may start
-- on MIN nodes and grow into idle ones, so it yields Slurm's queue to rigid jobs, which can
-- start only at their full size: otherwise a `-N 1-k` job takes the first idle node ahead of
-- the smaller rigid jobs behind it and holds it for longer at MIN (docs/evaluation.md, "Elastic
-- jobs yield Slurm's queue"). 1,000,000 puts them behind every job of normal priority under
-- priority/basic (one step per submission) and priority/multifactor (weights below a million).
local ELASTIC_NICE = 1000000
local NICE_OFFSET = 2147483648 -- job_desc.nice is NICE_OFFSET + the nice value (slurm.h)
local MAX_NICE = 2147483645    -- the largest nice Slurm accepts

local function is_elastic(job_desc)
  local env = job_desc.spank_job_env
  if env == nil then return false end
  for i = 1, (job_desc.spank_job_env_size or 0) do
    if env[i] == "ELASTIC=1" then return true end
  end
  return false
end

-- The --elastic-class word from the job's control environment (guaranteed, best-effort or
-- background), or "best-effort" when absent or anything else. elasticd reads it from here, not
-- from what the job's supervisor says, to order waiting jobs and to choose whom to preempt.
local function elastic_class(job_desc)
  local env = job_desc.spank_job_env
  local class = "best-effort"
  if env == nil then return class end
  for i = 0, (job_desc.spank_job_env_size or 0) do
    local entry = env[i]
    if type(entry) == "string" then
      local value = string.match(entry, "^ELASTIC_CLASS=([a-z-]+)$")
      if value == "guaranteed" or value == "background" then class = value end
    end
  end
  return class
end

-- An expansion job (salloc --dependency=expand:J) carries --elastic too; it is not elastic.
local function is_expansion(job_desc)
  return job_desc.dependency ~= nil and string.find(job_desc.dependency, "expand:", 1, true)
end

function slurm_elastic_record_bounds(job_desc)
  if not is_elastic(job_desc) or is_expansion(job_desc) then return end
  local min = job_desc.min_nodes
  if min == nil or min == NO_VAL or min < 1 then min = 1 end
  local max = job_desc.max_nodes
  if max == nil or max == NO_VAL or max < min then max = min end
  job_desc.admin_comment = string.format("elastic:nodes=0/%d-%d,class=%s", min, max,
                                         elastic_class(job_desc))
end

-- Lowers a foreground elastic job's priority by ELASTIC_NICE on top of the submitter's own
-- --nice. Background jobs are left alone: their partition's lower PriorityTier already puts them
-- last. The job's owner may take the nice back (scontrol update Nice=0): that only restores the
-- priority a rigid job of theirs would have.
function slurm_elastic_yield_queue(job_desc)
  if ELASTIC_NICE <= 0 or not is_elastic(job_desc) or is_expansion(job_desc) then return end
  if elastic_class(job_desc) == "background" then return end
  local nice = job_desc.nice
  if nice == nil or nice == NO_VAL then nice = NICE_OFFSET end
  job_desc.nice = math.min(nice + ELASTIC_NICE, NICE_OFFSET + MAX_NICE)
end

-- --elastic-class=background (DeepPool §5 co-location): the plugin cannot set a job's partition,
-- so it records the administrator's background partition (plugstack background_partition=) in
-- the job's control environment and this moves the job there. The value only ever moves the
-- submitter's own job into a partition it could have named with -p; Slurm checks access to the
-- partition after this script. Anything but a plain partition name is ignored.
function slurm_elastic_steer_background(job_desc)
  local env = job_desc.spank_job_env
  if env == nil then return end
  local background, partition = false, nil
  -- From 0: an entry Slurm's lua bridge does not fill is nil and skipped.
  for i = 0, (job_desc.spank_job_env_size or 0) do
    local entry = env[i]
    if type(entry) == "string" then
      if entry == "ELASTIC_CLASS=background" then background = true end
      local value = string.match(entry, "^ELASTIC_BACKGROUND_PARTITION=([%w_.-]+)$")
      if value ~= nil then partition = value end
    end
  end
  if background and partition ~= nil then job_desc.partition = partition end
end

function slurm_job_submit(job_desc, part_list, submit_uid)
  slurm_elastic_record_bounds(job_desc)
  slurm_elastic_yield_queue(job_desc)
  slurm_elastic_steer_background(job_desc)
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end
