#include "cmd.h"
int cmd_record(int argc, char **argv)
{
	return error("not yet");
}
