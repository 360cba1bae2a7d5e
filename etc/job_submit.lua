-- slurm-elastic's job_submit.lua: records an elastic job's node bounds (-N MIN-MAX) and
-- --elastic-class in its AdminComment at submission, because Slurm forgets the bounds once the
-- job runs and elasticd needs them to grow and shrink it, and the class to serve it. AdminComment is admin-only, so users cannot forge the record.
-- Install: JobSubmitPlugins=lua in slurm.conf and this file as job_submit.lua beside slurm.conf;
-- a site with its own job_submit.lua calls slurm_elastic_record_bounds(job_desc) (and, for
-- background jobs, slurm_elastic_steer_background(job_desc)) from it.

local NO_VAL = 4294967294

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

function slurm_elastic_record_bounds(job_desc)
  if not is_elastic(job_desc) then return end
  -- An expansion job (salloc --dependency=expand:J) carries --elastic too; it is not elastic.
  if job_desc.dependency ~= nil and string.find(job_desc.dependency, "expand:", 1, true) then
    return
  end
  local min = job_desc.min_nodes
  if min == nil or min == NO_VAL or min < 1 then min = 1 end
  local max = job_desc.max_nodes
  if max == nil or max == NO_VAL or max < min then max = min end
  job_desc.admin_comment = string.format("elastic:nodes=0/%d-%d,class=%s", min, max,
                                         elastic_class(job_desc))
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
  slurm_elastic_steer_background(job_desc)
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end
