"""The shipped model's card (deploy/MODEL_CARD.md, and zh/MODEL_CARD.md): what was selected and how sure, what the
model is and was trained on, how it was measured, how to load it, and what it does not promise; from selection.json
alone (comparisons/select.py writes both). No text of the data appears in it."""
from __future__ import annotations

from pathlib import Path

from comparisons.outputs import atomic_write_text
from comparisons.report.i18n import LANGUAGES, text
from comparisons.report.names import MODEL_CARD_MD as CARD_FILE
from comparisons.run_folder.selection_record import SelectionRecord


def write_model_card(folder: Path, record: SelectionRecord) -> list[Path]:
    """MODEL_CARD.md in the shipped model's folder (English) and in its zh/ (Chinese)."""
    written = []
    for language in LANGUAGES:
        target = Path(folder) / ("" if language == "en" else language)
        target.mkdir(parents=True, exist_ok=True)
        written.append(atomic_write_text(target / CARD_FILE, model_card(record, language)))
    return written


def model_card(record: SelectionRecord, lang: str = "en") -> str:
    decision, trained = record.decision, record.deployment
    pick, delta, confidence = record.pick, record.delta, record.confidence
    scores = record.scores_of(pick)
    onnx = trained["onnx"]
    threshold = trained.get("threshold")
    lines = [f"# {text('Model card', '模型卡', lang)}: {pick}", "",
             text(f"**Selected** from {len(record.candidates)} candidates ({', '.join(record.candidates)}): the best "
                  f"of them or within {delta:g} average precision of it, with probability at least {confidence:g} "
                  f"(`transformer-compare select`; docs/statistics.md, 'Selecting a recipe to deploy').",
                  f"从 {len(record.candidates)} 个候选（{'、'.join(record.candidates)}）中**选定**：它是其中最好的，"
                  f"或与最好者的平均精度相差不超过 {delta:g}，概率至少 {confidence:g}"
                  "（`transformer-compare select`；docs/statistics.md，“Selecting a recipe to deploy”）。", lang), "",
             f"## {text('What it is', '它是什么', lang)}", "",
             text(f"- Recipe `{pick}` (backend `{trained['backend']}`), budget profile `{trained['profile']}`, "
                  f"precision {trained['precision']}, model seed {trained['seed']}; {trained['params_total']:,} "
                  f"parameters, {trained['size_mb']:.1f} MB on disk.",
                  f"- 配方 `{pick}`（后端 `{trained['backend']}`），预算档 `{trained['profile']}`，精度 "
                  f"{trained['precision']}，模型种子 {trained['seed']}；{trained['params_total']:,} 个参数，"
                  f"磁盘 {trained['size_mb']:.1f} MB。", lang),
             text(f"- Trained on {trained['n_train_texts'] + trained['n_valid_texts']:,} labelled texts "
                  f"({trained['n_train_texts']:,} to train, {trained['n_valid_texts']:,} for its epochs and "
                  f"threshold) in {trained['train_seconds'] / 60:.1f} min; data fingerprint "
                  f"`{trained['data_sha256']}`; classes {', '.join(trained['class_names'])}.",
                  f"- 用 {trained['n_train_texts'] + trained['n_valid_texts']:,} 条标注文本训练（"
                  f"{trained['n_train_texts']:,} 条训练，{trained['n_valid_texts']:,} 条用于选轮数和阈值），耗时 "
                  f"{trained['train_seconds'] / 60:.1f} 分钟；数据指纹 `{trained['data_sha256']}`；类别 "
                  f"{'、'.join(trained['class_names'])}。", lang),
             text(f"- Decision threshold {threshold:.4f} on the probability of "
                  f"'{trained['class_names'][trained['positive_index']]}' ({trained['threshold_rule']})."
                  if threshold is not None else f"- Decisions: {trained['threshold_rule']}.",
                  f"- 判定阈值：对“{trained['class_names'][trained['positive_index']]}”的概率取 {threshold:.4f}"
                  f"（{trained['threshold_rule']}）。" if threshold is not None
                  else f"- 判定：{trained['threshold_rule']}。", lang), "",
             f"## {text('How it was measured', '如何测得', lang)}", "",
             text(f"- Test average precision over the {len(scores)} selection folds it ran: mean {scores.mean():.4f}, "
                  f"lowest {scores.min():.4f}, highest {scores.max():.4f}. Each fold trained the recipe on other "
                  "texts with another seed and tested it on texts it had not seen; the shipped model is one more "
                  "training of the same recipe on all the labels. The mean of the candidate that was selected "
                  "tends to be a little optimistic (it was chosen partly because its folds went well).",
                  f"- 在它运行过的 {len(scores)} 个选择折上的测试平均精度：均值 {scores.mean():.4f}，最低 "
                  f"{scores.min():.4f}，最高 {scores.max():.4f}。每一折用不同的文本和种子训练该配方，并在未见过的文本上"
                  "测试；发布的模型是用全部标注再训练一次的同一配方。被选中者的均值往往略偏乐观（它被选中，部分是因为"
                  "它的折表现好）。", lang),
             text(f"- At most {decision['behind_best'].get(pick, 0.0):.4f} AP below the best candidate, on the "
                  "event the guarantee holds on.",
                  f"- 在保证成立的事件上，至多比最好的候选低 {decision['behind_best'].get(pick, 0.0):.4f} AP。", lang),
             "", f"## {text('Files', '文件', lang)}", "",
             text(f"- `{trained['model_folder']}/`: the native model; load it with "
                  f"`backends.base.backend_class('{trained['backend']}').load('deploy/{trained['model_folder']}')`.",
                  f"- `{trained['model_folder']}/`：原生模型；用 "
                  f"`backends.base.backend_class('{trained['backend']}').load('deploy/{trained['model_folder']}')` "
                  "载入。", lang),
             text(f"- `{onnx['folder']}/`: the ONNX graph (docs/serving.md)." if onnx.get("exported")
                  else f"- No ONNX graph: {onnx.get('reason')}.",
                  f"- `{onnx['folder']}/`：ONNX 图（docs/serving.md）。" if onnx.get("exported")
                  else f"- 没有 ONNX 图：{onnx.get('reason')}。", lang),
             text("- `training.json`: the training record (versions, numerics identity, settings).",
                  "- `training.json`：训练记录（版本、数值身份、设置）。", lang), "",
             f"## {text('What it does not promise', '它不承诺什么', lang)}", "",
             text("- The selection compared these candidates on this data at this label count; texts unlike these "
                  "(another source, another time, another language) can rank the recipes differently: select again "
                  "when the data change.",
                  "- 这次选择是在这份数据、这个标注数量下比较这些候选；与之不同的文本（别的来源、别的时期、别的语言）"
                  "可能让配方的排序不同：数据变化时请重新选择。", lang),
             text("- Average precision ranks; the decisions at the threshold trade precision for recall as chosen on "
                  "the validation part. No fairness, robustness or calibration property was tested for deployment.",
                  "- 平均精度衡量排序；阈值处的判定按验证部分的选择在精确率与召回率之间取舍。没有为部署测试公平性、"
                  "鲁棒性或校准性质。", lang)]
    return "\n".join(lines) + "\n"
