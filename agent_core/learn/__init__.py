"""Learning from the user: training rows from the session logs, and `navtui finetune`.

Headless, like the rest of `agent_core`. `history` pairs each logged model turn with the exact
prompt it had and the user's decision; `rows` turns those into SFT, DPO and KTO rows whose
prompts are the rendered text the model read; `split` holds out whole sessions; `recipes` holds
each method's trl configuration and defaults; `decisions` measures each kind of decision with
trl's evaluation metrics; `trainer` trains a LoRA adapter with trl and writes it, with its
manifest (`provenance`), atomically (`adapter_dir`). trl, datasets, torch and peft are imported
only inside the functions that train (the optional `[train]` extra).
"""
