import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { describeError } from '../../api/errors.ts';
import { useWorkspace } from '../../api/workspace.tsx';
import { Button, FormError } from '../../ui/form.tsx';

// The chosen voice speaking its sample sentence (GET /v1/voices/{id}/preview, an MP3 fetched with
// the session's token, so played from a blob URL), played as soon as it arrives.

type Playback = 'idle' | 'playing' | 'played' | 'blocked';

const PLAYBACK_TEXT: Record<Playback, string> = { idle: '', playing: 'Playing the voice preview…', played: 'Played the voice preview', blocked: 'Press play to hear the preview' };

export function VoicePreview({ voice }: { voice: string }) {
  const { api } = useWorkspace();
  const audio = useRef<HTMLAudioElement>(null);
  const [url, setUrl] = useState<string>();
  const [playback, setPlayback] = useState<Playback>('idle');
  const load = useMutation({
    mutationFn: async (id: string) => {
      const mp3 = await (await api.voices.preview(id)).bytes();
      return URL.createObjectURL(new Blob([mp3 as BlobPart], { type: 'audio/mpeg' }));
    },
    onSuccess: (next) => setUrl(next),
  });
  useEffect(() => {
    if (!url || !audio.current) return;
    audio.current.play().catch(() => setPlayback('blocked'));
    return () => URL.revokeObjectURL(url);
  }, [url]);
  const preview = () => {
    setPlayback('idle');
    setUrl(undefined);
    load.mutate(voice);
  };
  return (
    <div className="voice-preview">
      <Button variant="secondary" onPress={preview} isDisabled={voice === ''} isPending={load.isPending}>
        {load.isPending ? 'Loading the preview…' : 'Preview voice'}
      </Button>
      {url ? (
        // biome-ignore lint/a11y/useMediaCaption: a sample sentence of the voice; its words are not the point
        <audio ref={audio} controls src={url} aria-label="Voice preview" onPlay={() => setPlayback('playing')} onEnded={() => setPlayback('played')} />
      ) : null}
      <span role="status" className="hint">
        {PLAYBACK_TEXT[playback]}
      </span>
      <FormError message={load.error ? describeError(load.error).message : undefined} />
    </div>
  );
}
