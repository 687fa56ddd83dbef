/* What each SPANK hook of spank_gpudirect.so costs, measured inside the processes that run it, the
 * way slurmstepd runs them: per round (one "step"), a fresh process loads the plugin, runs init,
 * the option callback (twice, as slurmstepd does), init_post_opt and user_init, then forks one
 * process per task
 * that runs task_init. Written in C because slurmstepd is C: loading the plugin here also loads
 * libstdc++ and the rest of its dependencies, as it does in slurmstepd. A baseline step that only
 * forks the tasks shows what the process structure itself costs. Prints medians of times and of minor page
 * faults (never asserts).
 *   plugin_hook_times PLUGIN.so ROUNDS TASKS OPTION [PLUGSTACK_ARG ...]
 * OPTION is the --gpu-direct value ("tcpxo", "" for a bare --gpu-direct) or "-" for no option.
 * Each task sees SLURM_STEP_GPUS=0..TASKS-1 and CUDA_VISIBLE_DEVICES=<its local id>. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

enum { max_tasks = 64 };

static struct spank_option* registered;
static uint32_t local_task;
static uint32_t task_count;

/* Minor page faults so far: each is a page this process touched for the first time or copied
 * after fork (copy-on-write), a cost that does not depend on how busy the machine is. */
static double faults(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return (double)usage.ru_minflt;
}

/* CPU time of this process: what a hook costs whatever else the machine runs. */
static double cpu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The stand-ins slurmstepd provides, exported from this executable (ENABLE_EXPORTS). In a task the
 * process environment is the task's environment, as it is after slurmstepd's fork. */
spank_context_t spank_context(void) { return S_CTX_REMOTE; }

spank_err_t spank_option_register(spank_t spank, struct spank_option* option) {
  (void)spank;
  registered = option;
  return ESPANK_SUCCESS;
}

spank_err_t spank_getenv(spank_t spank, const char* name, char* buffer, int size) {
  (void)spank;
  const char* value = getenv(name);
  if (!value) return ESPANK_ENV_NOEXIST;
  if ((int)strlen(value) >= size) return ESPANK_NOSPACE;
  strcpy(buffer, value);
  return ESPANK_SUCCESS;
}

spank_err_t spank_setenv(spank_t spank, const char* name, const char* value, int overwrite) {
  (void)spank;
  return setenv(name, value, overwrite) == 0 ? ESPANK_SUCCESS : ESPANK_ERROR;
}

spank_err_t spank_get_item(spank_t spank, spank_item_t item, ...) {
  (void)spank;
  va_list args;
  va_start(args, item);
  spank_err_t result = ESPANK_SUCCESS;
  switch (item) {
    case S_JOB_STEPID:
      *va_arg(args, uint32_t*) = 0;
      break;
    case S_TASK_ID:
      *va_arg(args, uint32_t*) = local_task;
      break;
    case S_TASK_GLOBAL_ID:
      *va_arg(args, uint32_t*) = local_task;
      break;
    case S_JOB_LOCAL_TASK_COUNT:
      *va_arg(args, uint32_t*) = task_count;
      break;
    default:
      result = ESPANK_NOT_AVAIL;
  }
  va_end(args);
  return result;
}

void slurm_error(const char* format, ...) {
  va_list args;
  va_start(args, format);
  fputs("plugin_hook_times: the plugin logged: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
}

void slurm_verbose(const char* format, ...) { (void)format; }
void slurm_spank_log(const char* format, ...) { (void)format; }

typedef int (*hook_fn)(spank_t, int, char**);

/* One step's numbers: the hooks' CPU time and the step's wall time in ms, page faults. */
struct step_times {
  double dlopen, init, option, post_opt, user_init, task_max, tasks_wall, step_wall;
  double dlopen_faults, post_opt_faults, task_faults; /* task_faults: mean of the tasks */
  double task[max_tasks];
  int ok;
};

static hook_fn hook(void* plugin, const char* name) {
  hook_fn symbol = (hook_fn)dlsym(plugin, name);
  if (!symbol) {
    fprintf(stderr, "plugin_hook_times: %s is missing from the plugin\n", name);
    _exit(2);
  }
  return symbol;
}

/* Forks the tasks; each runs `task_init` (or nothing for the baseline) and sends its time back. */
static int run_tasks(hook_fn task_init, struct step_times* out) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  char gpus[4 * max_tasks] = "";
  for (uint32_t t = 0; t < task_count; ++t) snprintf(gpus + strlen(gpus), sizeof gpus - strlen(gpus), "%s%u", t ? "," : "", t);
  const double start = now_ms();
  for (uint32_t t = 0; t < task_count; ++t) {
    const pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
      close(fds[0]);
      local_task = t;
      char visible[16], tasks[16];
      snprintf(visible, sizeof visible, "%u", t);
      snprintf(tasks, sizeof tasks, "%u", task_count);
      setenv("SLURM_STEP_GPUS", gpus, 1);
      setenv("CUDA_VISIBLE_DEVICES", visible, 1);
      setenv("SLURM_JOB_ID", "42", 1);
      setenv("SLURM_NODEID", "0", 1);
      setenv("SLURM_STEP_TASKS_PER_NODE", tasks, 1);
      double result[3] = {t, 0, 0};
      const double f = faults();
      const double s = cpu_ms();
      const int rc = task_init ? task_init((spank_t)&registered, 0, NULL) : 0;
      result[1] = rc == 0 ? cpu_ms() - s : -1;
      result[2] = faults() - f;
      if (write(fds[1], result, sizeof result) != (ssize_t)sizeof result) _exit(3);
      _exit(rc == 0 ? 0 : 1);
    }
  }
  close(fds[1]);
  int ok = 1;
  double result[3];
  out->task_max = 0;
  out->task_faults = 0;
  while (read(fds[0], result, sizeof result) == (ssize_t)sizeof result) {
    if (result[1] < 0) ok = 0;
    out->task_faults += result[2] / task_count;
    out->task[(int)result[0]] = result[1];
    if (result[1] > out->task_max) out->task_max = result[1];
  }
  close(fds[0]);
  int status;
  while (wait(&status) > 0)
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ok = 0;
  out->tasks_wall = now_ms() - start;
  return ok ? 0 : -1;
}

/* One step in a fresh process. plugin NULL: the baseline (tasks forked, no plugin). */
static struct step_times one_step(const char* plugin_path, const char* option, int argc, char** argv) {
  struct step_times times;
  memset(&times, 0, sizeof times);
  int fds[2];
  if (pipe(fds) != 0) return times;
  const double start = now_ms();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    struct step_times mine;
    memset(&mine, 0, sizeof mine);
    hook_fn task_init = NULL;
    double s = cpu_ms();
    double f = faults();
    if (plugin_path) {
      void* plugin = dlopen(plugin_path, RTLD_LAZY); /* Slurm's plugin loader uses RTLD_LAZY */
      if (!plugin) {
        fprintf(stderr, "plugin_hook_times: cannot load the plugin: %s\n", dlerror());
        _exit(2);
      }
      mine.dlopen = cpu_ms() - s;
      mine.dlopen_faults = faults() - f;
      s = cpu_ms();
      if (hook(plugin, "slurm_spank_init")((spank_t)&registered, argc, argv) != 0 || !registered) _exit(4);
      mine.init = cpu_ms() - s;
      if (option) {
        s = cpu_ms();
        for (int i = 0; i < 2; ++i)
          if (registered->cb(registered->val, option, 1) != 0) _exit(5);
        mine.option = cpu_ms() - s;
      }
      s = cpu_ms();
      f = faults();
      /* Older builds of the plugin have no init_post_opt: the column is 0 for them. */
      const hook_fn post_opt = (hook_fn)dlsym(plugin, "slurm_spank_init_post_opt");
      if (post_opt && post_opt((spank_t)&registered, argc, argv) != 0) _exit(6);
      mine.post_opt = cpu_ms() - s;
      mine.post_opt_faults = faults() - f;
      s = cpu_ms();
      if (hook(plugin, "slurm_spank_user_init")((spank_t)&registered, 0, NULL) != 0) _exit(6);
      mine.user_init = cpu_ms() - s;
      task_init = hook(plugin, "slurm_spank_task_init");
    }
    mine.ok = run_tasks(task_init, &mine) == 0;
    if (write(fds[1], &mine, sizeof mine) != (ssize_t)sizeof mine) _exit(3);
    _exit(0);
  }
  close(fds[1]);
  if (pid > 0 && read(fds[0], &times, sizeof times) != (ssize_t)sizeof times) times.ok = 0;
  close(fds[0]);
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  times.step_wall = now_ms() - start;
  if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) times.ok = 0;
  return times;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* values, int n) {
  qsort(values, (size_t)n, sizeof *values, by_value);
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr,
            "usage: plugin_hook_times PLUGIN.so ROUNDS TASKS OPTION [PLUGSTACK_ARG ...]\n"
            "  OPTION: the --gpu-direct value, or - for none\n");
    return 2;
  }
  const int rounds = atoi(argv[2]);
  task_count = (uint32_t)atoi(argv[3]);
  const char* option = strcmp(argv[4], "-") == 0 ? NULL : argv[4];
  if (rounds < 1 || rounds > 10000 || task_count < 1 || task_count > max_tasks) {
    fprintf(stderr, "plugin_hook_times: ROUNDS must be 1..10000 and TASKS 1..%d\n", max_tasks);
    return 2;
  }
  enum { columns_count = 13 };
  double* columns[columns_count];
  for (int c = 0; c < columns_count; ++c) columns[c] = calloc((size_t)rounds, sizeof(double));
  for (int r = 0; r < rounds; ++r) {
    /* Alternate baseline and plugin so that drift on a shared machine hits both alike. */
    const struct step_times base = one_step(NULL, NULL, 0, NULL);
    const struct step_times step = one_step(argv[1], option, argc - 5, argv + 5);
    if (!base.ok || !step.ok) {
      fprintf(stderr, "plugin_hook_times: round %d failed (see the plugin's messages above)\n", r + 1);
      return 1;
    }
    double task_sum = 0;
    for (uint32_t t = 0; t < task_count; ++t) task_sum += step.task[t];
    const double row[columns_count] = {step.dlopen,        step.init,
                                       step.option,        step.post_opt,
                                       step.user_init,     task_sum / task_count,
                                       step.task_max,      step.tasks_wall,
                                       step.step_wall,     step.step_wall - base.step_wall,
                                       step.dlopen_faults, step.post_opt_faults,
                                       step.task_faults};
    for (int c = 0; c < columns_count; ++c) columns[c][r] = row[c];
  }
  static const char* const names[columns_count] = {"CPU: dlopen (plugin + its libraries)",
                                                   "CPU: slurm_spank_init",
                                                   "CPU: option callback x2",
                                                   "CPU: slurm_spank_init_post_opt",
                                                   "CPU: slurm_spank_user_init",
                                                   "CPU: slurm_spank_task_init, task mean",
                                                   "CPU: slurm_spank_task_init, max",
                                                   "wall: tasks forked to all reaped",
                                                   "wall: whole step",
                                                   "wall: whole step minus baseline step",
                                                   "page faults: dlopen",
                                                   "page faults: slurm_spank_init_post_opt",
                                                   "page faults: task_init, mean of tasks"};
  printf("plugin_hook_times: %d rounds, %u tasks, --gpu-direct%s%s; medians\n", rounds, task_count, option ? "=" : " not given",
         option ? option : "");
  for (int c = 0; c < columns_count; ++c) printf(c < 10 ? "  %-40s %8.3f ms\n" : "  %-40s %8.0f\n", names[c], median(columns[c], rounds));
  for (int c = 0; c < columns_count; ++c) free(columns[c]);
  return 0;
}
