# A tiny Trainer run on CPU (no download): GPT-2 of 2 layers on random tokens,
# logging every 2 steps, to record what transformers prints.
import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=100, n_positions=16))


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        ids = torch.randint(0, 100, (16,))
        return {"input_ids": ids, "labels": ids}


args = TrainingArguments(output_dir="/tmp/culprit-rec/hf_out", per_device_train_batch_size=8, num_train_epochs=2,
                         logging_steps=2, save_strategy="no", report_to=[], use_cpu=True, disable_tqdm=False)
Trainer(model=model, args=args, train_dataset=Tokens()).train()
