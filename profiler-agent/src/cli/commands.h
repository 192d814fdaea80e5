/* Subcommands of hitcurve-agent; each lives in its own file. */
#ifndef HC_COMMANDS_H
#define HC_COMMANDS_H
int cmd_replay(int argc, char **argv); /* src/cli/replay.c: offline profiling of a trace */
int cmd_run(int argc, char **argv);    /* src/agent/run.c: live agent beside memcached */
#endif
