"""Post-training on the arena's corpus (the `distill` extra).

Importing the package sets OpenMP's wait policy to passive unless the environment
already chose one. torch's CPU kernels run on OpenMP, whose threads by default spin
between parallel regions; on a machine whose cores are also busy with anything else
(a validator, a test suite, a second training), a spinning thread holds a core the
thread it waits for needs. Measured with one LoRA step of Gemma 3 270M on 2 cores beside
one busy process: 40-46 s a step spinning, 15 s passive, about 9 s on idle cores either
way. The policy is read when libgomp loads, so it must be set before torch is imported:
every training and serving path imports torch inside ``distill``.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
