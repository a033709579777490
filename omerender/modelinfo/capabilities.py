"""OME's determineModelCapabilitiesFromHF: one capability list from the architecture and model type."""
from __future__ import annotations

_EDIT = ("imageedit", "pix2pix", "img2img", "inpaint")
_AUDIO_IN = ("whisper", "wav2vec2", "hubert", "fortc", "forspeechtotext")
_OMNI = ["TEXT_TO_AUDIO", "IMAGE_TEXT_TO_AUDIO", "VIDEO_TEXT_TO_AUDIO", "AUDIO_TO_TEXT", "AUDIO_TO_AUDIO"]


def capabilities(architecture: str, model_type: str, vision: bool, embedding: bool, diffusion: bool) -> list[str]:
    arch, kind = architecture.lower(), model_type.lower()
    if diffusion:
        found = _diffusion(arch)
        if found:
            return found
    if "nemotronh_nano" in kind:
        return ["IMAGE_TEXT_TO_TEXT", "TEXT_TO_TEXT", "AUDIO_TO_TEXT"]
    if vision:
        return ["IMAGE_TEXT_TO_TEXT"]
    if "omni" in arch:
        return list(_OMNI)
    if any(word in arch for word in _AUDIO_IN):
        return ["AUDIO_TO_TEXT"]
    if (embedding or "embedding" in arch or "sentence" in arch or "bert" in kind
            or ("mistral" in kind and "mistralmodel" in arch)):
        return ["EMBEDDING"]
    return ["TEXT_TO_TEXT"]


def _diffusion(arch: str) -> list[str]:
    if any(word in arch for word in _EDIT):
        return ["IMAGE_TEXT_TO_IMAGE"]
    if "image" in arch or "pix" in arch or "stablediffusion" in arch:
        return ["TEXT_TO_IMAGE"]
    if "texttovideo" in arch or "t2v" in arch:
        return ["TEXT_TO_VIDEO"]
    if "video" in arch:
        return ["IMAGE_TEXT_TO_VIDEO"]
    return []
