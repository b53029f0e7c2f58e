"""Race test agent: breaks its own run (kills its own process) once it has the problem."""

import os
import signal


def agent_main(problem):
    os.kill(os.getpid(), signal.SIGKILL)
