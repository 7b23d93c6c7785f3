# A Hugging Face Trainer-shaped program on CPU with Gloo (transformers is not
# needed: its shape is copied): a Trainer whose training loop runs each step
# (forward, backward under DDP, optimizer step), then calls every callback's
# on_step_end through a CallbackHandler, as transformers' Trainer does; rank 0
# logs transformers 5's dicts with quoted values. A user's callback falls
# asleep on rank 1 at step 10, so the other ranks go on into step 11's
# backward and wait there for DDP's gradient all_reduce. Runs until killed.
# Nothing in it asks for stacks: ddpctl's sitecustomize does.
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


class TrainerState:
    def __init__(self):
        self.global_step = 0
        self.epoch = 0.0


class TrainerControl:
    should_log = False


class TrainerCallback:
    def on_step_end(self, args, state, control, **kwargs):
        pass


class CallbackHandler:
    def __init__(self, callbacks):
        self.callbacks = callbacks

    def on_step_end(self, args, state, control):
        return self.call_event("on_step_end", args, state, control)

    def call_event(self, event, args, state, control, **kwargs):
        for callback in self.callbacks:
            result = getattr(callback, event)(args, state, control, **kwargs)
            if result is not None:
                control = result
        return control


class Trainer:
    def __init__(self, model, callbacks, steps_per_epoch=126):
        self.model = DDP(model)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=5e-5)
        self.state = TrainerState()
        self.control = TrainerControl()
        self.args = None
        self.steps_per_epoch = steps_per_epoch
        self.callback_handler = CallbackHandler(callbacks)

    def training_step(self, inputs, labels):
        loss = F.cross_entropy(self.model(inputs), labels)
        loss.backward()
        return loss.detach()

    def train(self):
        torch.manual_seed(dist.get_rank())
        while True:
            inputs, labels = torch.randn(8, 16), torch.randint(0, 4, (8,))
            self.optimizer.zero_grad()
            loss = self.training_step(inputs, labels)
            self.optimizer.step()
            self.state.global_step += 1
            self.state.epoch = self.state.global_step / self.steps_per_epoch
            if dist.get_rank() == 0:
                print({"loss": f"{loss.item():.4g}", "grad_norm": "0.5844", "learning_rate": "4.9e-05",
                       "epoch": f"{self.state.epoch:.4g}"}, flush=True)
            self.control = self.callback_handler.on_step_end(self.args, self.state, self.control)
            time.sleep(0.2)


class SlowCallback(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        if dist.get_rank() == 1 and state.global_step == 10:
            time.sleep(3600)  # the hang


def main():
    dist.init_process_group("gloo")
    Trainer(torch.nn.Linear(16, 4), [TrainerCallback(), SlowCallback()]).train()


main()
