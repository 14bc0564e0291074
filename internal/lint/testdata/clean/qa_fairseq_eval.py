import logging
import math

import torch
from fairseq import checkpoint_utils, options, tasks, utils
from fairseq.logging import metrics, progress_bar

logger = logging.getLogger("fairseq_cli.validate")


def main(cfg, override_args=None):
    use_fp16 = cfg.common.fp16
    use_cuda = torch.cuda.is_available() and not cfg.common.cpu
    if use_cuda:
        torch.cuda.set_device(cfg.distributed_training.device_id)

    models, saved_cfg, task = checkpoint_utils.load_model_ensemble_and_task(
        [cfg.common_eval.path], arg_overrides={}, suffix=cfg.checkpoint.checkpoint_suffix)
    model = models[0]
    for model in models:
        model.eval()
        if use_fp16:
            model.half()
        if use_cuda:
            model.cuda()

    criterion = task.build_criterion(saved_cfg.criterion)
    criterion.eval()

    for subset in cfg.dataset.valid_subset.split(","):
        task.load_dataset(subset, combine=False, epoch=1, task_cfg=saved_cfg.task)
        dataset = task.dataset(subset)
        itr = task.get_batch_iterator(dataset=dataset, max_tokens=cfg.dataset.max_tokens,
                                      num_workers=cfg.dataset.num_workers).next_epoch_itr(shuffle=False)
        progress = progress_bar.progress_bar(itr, log_format=cfg.common.log_format, prefix=f"valid on '{subset}' subset")
        log_outputs = []
        for i, sample in enumerate(progress):
            sample = utils.move_to_cuda(sample) if use_cuda else sample
            _loss, _sample_size, log_output = task.valid_step(sample, model, criterion)
            progress.log(log_output, step=i)
            log_outputs.append(log_output)

        with metrics.aggregate() as agg:
            task.reduce_metrics(log_outputs, criterion)
            log_output = agg.get_smoothed_values()
        progress.print(log_output, tag=subset, step=i)


def generate(model, loader, device):
    model.eval()
    hyps = []
    total = 0.0
    with torch.no_grad():
        for batch in loader:
            src = batch["net_input"]["src_tokens"].to(device)
            out = model(src)
            lprobs = torch.log_softmax(out, dim=-1)
            total += lprobs.max(dim=-1).values.sum().item()
            hyps.append(lprobs.argmax(dim=-1).cpu())
    return hyps, total


def cli_main():
    parser = options.get_validation_parser()
    args = options.parse_args_and_arch(parser)
    main(args)


if __name__ == "__main__":
    cli_main()
