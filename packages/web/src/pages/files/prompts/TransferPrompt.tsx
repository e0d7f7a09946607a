import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { PromptCard } from '../../../components/prompts/PromptCard';
import type { PromptProps } from '../../../components/prompts/types';
import { useUser } from '../../../hooks/use-user';
import { filesRoute } from '../../../utils/paths';
import { isInside, samePath, transferOrAsk, type TransferKind } from '../operations';
import { FolderPicker, useFolder } from './FolderPicker';

type TransferPromptProps = PromptProps<'move'> & { kind: TransferKind };

/** The move and copy dialogs: browse to a folder (or create one), then move or copy there. */
export function TransferPrompt({ kind, props: { items, from }, close }: TransferPromptProps) {
  const { t } = useTranslation();
  const user = useUser();
  const navigate = useNavigate();
  const [destination, setDestination] = useState(from);
  const [version, setVersion] = useState(0);
  const [busy, setBusy] = useState(false);
  const state = useFolder(destination, version);

  const intoItself = items.some((item) => isInside(destination, item.path));
  const disabled =
    busy || state.status !== 'ready' || intoItself || (kind === 'move' && samePath(destination, from));

  const submit = async () => {
    if (disabled || state.status !== 'ready') return;
    setBusy(true);
    const result = await transferOrAsk({
      kind,
      items,
      from,
      destination,
      destinationItems: state.folder.items ?? [],
      beforePrompt: close,
      onSuccess: () => {
        if (user.redirectAfterCopyMove) void navigate(filesRoute(destination, true));
      },
    });
    if (result !== 'asked') close();
  };

  const move = kind === 'move';
  return (
    <PromptCard
      title={move ? t('prompts.transfer.moveTitle') : t('prompts.transfer.copyTitle')}
      actions={
        <>
          <button type="button" className="button button--flat" onClick={close}>
            {t('buttons.cancel')}
          </button>
          <button
            type="button"
            className="button button--flat button--primary"
            disabled={disabled}
            onClick={() => void submit()}
          >
            {move ? t('buttons.move') : t('buttons.copy')}
          </button>
        </>
      }
    >
      <p>
        {move
          ? t('prompts.transfer.moveMessage', { count: items.length })
          : t('prompts.transfer.copyMessage', { count: items.length })}
      </p>
      <FolderPicker
        path={destination}
        state={state}
        moving={items}
        canCreate={user.perm.create}
        onNavigate={setDestination}
        onCreated={(created) => {
          setDestination(created);
          setVersion((n) => n + 1);
        }}
      />
    </PromptCard>
  );
}
